-- Revocation of dashboard JWTs (issue 19): every token carries the user's token_version at issue time and
-- is refused once the version has moved on. Logout and a password change raise it. A counter, not a
-- timestamp, so a token issued in the same second as the logout is refused too.
ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;
