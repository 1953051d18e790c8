// zod with the OpenAPI extension applied once. Every schema in the code base is built from this import (zod 4
// gives each schema its methods when it is made, so one made before the extension ran has no `.openapi`).
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
