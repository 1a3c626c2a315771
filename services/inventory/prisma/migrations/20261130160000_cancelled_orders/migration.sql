-- Issue 13: orders cancelled while (or before) their stock was held.
-- cancelled_order: orders this service knows to be cancelled (OrderCancelled), written in the same
-- transaction as the release it causes, or alone when nothing was held, so a PaymentProcessed
-- arriving after the cancel reserves nothing. `reason` is the order's cancellation reason.
-- reservation.unit_price: the line's unit price as PaymentProcessed carried it, so a release caused
-- by OrderCancelled (which carries no lines) can announce the order's lines in StockReleased; rows
-- reserved before this migration have none, and their release announces a unit price of 1.

-- CreateTable
CREATE TABLE "cancelled_order" (
    "order_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "cancelled_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cancelled_order_pkey" PRIMARY KEY ("order_id")
);

-- AlterTable
ALTER TABLE "reservation" ADD COLUMN "unit_price" INTEGER,
    ADD CONSTRAINT "reservation_unit_price_positive" CHECK ("unit_price" > 0);
