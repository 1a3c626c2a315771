-- Orders this service knows to be cancelled (OrderCancelled, issue 13): written in the same
-- transaction as the refund it causes, or alone when there was nothing to refund, so an OrderCreated
-- arriving after the cancel charges nothing. One row per order; `reason` is the order's
-- cancellation reason (a failing step's code, `deadline_exceeded` or `customer_requested`).

-- CreateTable
CREATE TABLE "cancelled_order" (
    "order_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "cancelled_at" TIMESTAMPTZ(3) NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cancelled_order_pkey" PRIMARY KEY ("order_id")
);
