-- Issue 13: durable deadlines and the cancel's cause in the timeline.
-- `deadline_at` is set by POST /orders in the order's own transaction from the database clock
-- (now() + ORDER_DEADLINE_MS); orders placed before this migration have none and never expire.
-- The partial index is what the deadline scheduler claims from and arms its timer with: only
-- PENDING orders are in it, so it stays as small as the orders in flight.

-- AlterTable
ALTER TABLE "orders" ADD COLUMN "deadline_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "order_events" ADD COLUMN "note" TEXT;

-- CreateIndex
CREATE INDEX "orders_pending_deadline_at_idx" ON "orders"("deadline_at") WHERE "status" = 'PENDING' AND "deadline_at" IS NOT NULL;
