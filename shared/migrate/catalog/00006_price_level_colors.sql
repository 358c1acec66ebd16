-- +goose Up
-- The colour a price level has on the seat map ('' lets the map choose).
ALTER TABLE event_price_levels ADD COLUMN color TEXT NOT NULL DEFAULT '' CHECK (color ~ '^(#[0-9a-fA-F]{6})?$');

-- +goose Down
ALTER TABLE event_price_levels DROP COLUMN color;
