-- Issue 13: a shipment can be cancelled before it leaves, because its order was cancelled.
-- shipment: status CANCELLED with its time and the order's cancellation reason. The CHECK names only
-- the old value: a value added by ALTER TYPE cannot be used in the transaction that adds it.
-- cancelled_order: orders this service knows to be cancelled (OrderCancelled), written in the same
-- transaction as the shipment's cancel, or alone when there was no shipment, so a StockReserved
-- arriving after the cancel books nothing. `reason` is the order's cancellation reason.

-- AlterEnum
ALTER TYPE "ShipmentStatus" ADD VALUE 'CANCELLED';

-- AlterTable
ALTER TABLE "shipment" ADD COLUMN "cancelled_at" TIMESTAMPTZ(3),
    ADD COLUMN "cancel_reason" TEXT,
    ADD CONSTRAINT "shipment_cancelled_matches_status" CHECK (
        ("status" = 'CREATED') = ("cancelled_at" IS NULL AND "cancel_reason" IS NULL)
    );

-- CreateTable
CREATE TABLE "cancelled_order" (
    "order_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "cancelled_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cancelled_order_pkey" PRIMARY KEY ("order_id")
);
