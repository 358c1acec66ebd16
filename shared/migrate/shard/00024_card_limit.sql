-- +goose Up
-- The card a payment attempt was charged on, as the provider fingerprints
-- it (Stripe's payment_method_details.card.fingerprint: the same for every
-- account that types the same card number): a card is limited per event
-- as an account is. NULL for attempts not paid by card, or paid before.
ALTER TABLE payments ADD COLUMN card_fingerprint TEXT;
CREATE INDEX payments_card ON payments (card_fingerprint) WHERE card_fingerprint IS NOT NULL;

-- +goose Down
DROP INDEX payments_card;
ALTER TABLE payments DROP COLUMN card_fingerprint;
