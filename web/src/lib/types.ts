// The server's response types, inferred from the same zod schemas that validate and document them.
import type {
  invitePreviewView,
  inviteRegisteredView,
  passwordChangedView,
  setupView,
  signInView,
  userView,
  websiteListView,
  websiteView,
} from '../../../lib/accounts/responses';
import type { z } from '../../../lib/zod';

export type User = z.infer<typeof userView>;
export type SignIn = z.infer<typeof signInView>;
export type Website = z.infer<typeof websiteView>['website'];
export type WebsiteList = z.infer<typeof websiteListView>;
export type Setup = z.infer<typeof setupView>;
export type InvitePreview = z.infer<typeof invitePreviewView>;
export type InviteRegistered = z.infer<typeof inviteRegisteredView>;
export type PasswordChanged = z.infer<typeof passwordChangedView>;
