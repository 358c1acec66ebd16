-- +goose Up
-- Door staff an organizer lists and revokes (shared/entry): id names a
-- grant in URLs without the account's id, and email is the address the
-- organizer typed, what the list shows instead of the account's name
-- (which an email must not reveal). Grants made before have no email;
-- the list shows the account's. A revocation deletes the row.
ALTER TABLE door_staff ADD COLUMN id BIGINT GENERATED ALWAYS AS IDENTITY, ADD COLUMN email TEXT;
CREATE UNIQUE INDEX door_staff_id ON door_staff (id);

-- +goose Down
ALTER TABLE door_staff DROP COLUMN id, DROP COLUMN email;
