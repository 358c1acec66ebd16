-- +goose Up
-- An organizer's pause of admission (the live control room): the admission
-- controller reads it with the event every second and admits nobody while
-- it is set; fans keep their places and admitted fans keep buying.
ALTER TABLE events ADD COLUMN admission_paused BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE events DROP COLUMN admission_paused;
