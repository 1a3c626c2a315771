-- Search by customer: GET /orders?customerId= and GET /orders/lookup, newest first within a customer,
-- keyset on (created_at, id). It costs an index entry when an order is written and when it ends (that
-- UPDATE changes the indexed status, so it is not HOT and writes every index anyway). The other ids search reads already have an index: the
-- order id and its start (orders_pkey, a range for a prefix), an Idempotency-Key
-- (idempotency_keys_pkey), a fact's message id (order_events_pkey).
-- IF NOT EXISTS: on a large table build it beforehand with CREATE INDEX CONCURRENTLY (same name and
-- definition); this migration then takes no lock that would hold the writers while it builds.
CREATE INDEX IF NOT EXISTS "orders_customer_id_created_at_id_idx" ON "orders"("customer_id", "created_at", "id");
