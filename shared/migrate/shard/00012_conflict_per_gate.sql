-- +goose Up
-- Scan ids are each gate's own (1, 2, 3…): a conflict is one gate's scan
-- of one ticket, so two gates' losing scans with the same id are two
-- conflicts, and only a replayed sync of the same scan is the same one.
ALTER TABLE checkin_conflicts DROP CONSTRAINT checkin_conflicts_scan_id_key;
ALTER TABLE checkin_conflicts ADD CONSTRAINT checkin_conflicts_scan_key UNIQUE (ticket_id, gate, scan_id);

-- +goose Down
ALTER TABLE checkin_conflicts DROP CONSTRAINT checkin_conflicts_scan_key;
DELETE FROM checkin_conflicts c USING checkin_conflicts d WHERE c.scan_id = d.scan_id AND c.id > d.id;
ALTER TABLE checkin_conflicts ADD CONSTRAINT checkin_conflicts_scan_id_key UNIQUE (scan_id);
