-- The table of @saga/cancellations' register: one row per order the service knows to be cancelled.
-- Copy the statement below into a migration of each service that uses the register (payment,
-- inventory and shipment hold it in prisma/migrations/20261130160000_cancelled_orders); their
-- test/cancellations-migration.unit.test.ts compares it with this file.
CREATE TABLE "cancelled_order" (
    "order_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "cancelled_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cancelled_order_pkey" PRIMARY KEY ("order_id")
);
