-- +goose Up
-- A GA order item records the slot each of its places came from, one entry
-- per place ({3,3} for two places of slot 3, {3,5} for a take split over
-- two slots), so releasing a hold gives them back exactly. The hold writes
-- the item anyway: the hold_ga row it wrote beside it (and its index entry)
-- was most of what catraca's GA hold cost more than alf.io's.
-- Seat items, and GA items written without the slots (bulk demo orders),
-- have none.
ALTER TABLE order_items ADD COLUMN slots INT[] CHECK (cardinality(slots) = quantity);
UPDATE order_items i SET slots = g.slots
FROM (SELECT o.id AS order_id, g.pool_id, array_agg(g.slot ORDER BY g.slot) AS slots
      FROM hold_ga g JOIN orders o ON o.hold_id = g.hold_id CROSS JOIN generate_series(1, g.quantity)
      GROUP BY o.id, g.pool_id) g
WHERE i.order_id = g.order_id AND i.pool_id = g.pool_id;
DROP TABLE hold_ga;

-- +goose Down
CREATE TABLE hold_ga (
    hold_id  BIGINT NOT NULL,
    pool_id  BIGINT NOT NULL,
    slot     INT NOT NULL,
    quantity INT NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (hold_id, pool_id, slot)
);
INSERT INTO hold_ga (hold_id, pool_id, slot, quantity)
SELECT o.hold_id, i.pool_id, s.slot, count(*)
FROM order_items i JOIN orders o ON o.id = i.order_id CROSS JOIN unnest(i.slots) AS s (slot)
GROUP BY o.hold_id, i.pool_id, s.slot;
ALTER TABLE order_items DROP COLUMN slots;
