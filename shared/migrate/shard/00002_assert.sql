-- +goose Up
-- assert() lets a pipelined implicit transaction abort itself with a
-- catraca SQLSTATE (class CT) when a condition fails, so a whole hold can be
-- sent as one round trip and still be all-or-nothing.
-- +goose StatementBegin
CREATE FUNCTION assert(ok BOOLEAN, code TEXT, message TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
    END IF;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION assert(BOOLEAN, TEXT, TEXT);
