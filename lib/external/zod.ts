// zod with the OpenAPI extension applied once: every schema the OpenAPI document is generated from is built
// from this import, so `.openapi(...)` metadata (parameter descriptions, component names) is always there.
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
