-- Stock per sku and reservations per order line.
-- available = units free to reserve; reserved = units held by reservations (confirmed orders keep
-- theirs). The CHECKs are the last line of defence: the reaction locks rows in sku order and decides
-- before it writes, so a violation means a bug, and it rolls the whole transaction back.

-- CreateEnum
CREATE TYPE "ReservationStatus" AS ENUM ('RESERVED', 'RELEASED');

-- CreateTable
CREATE TABLE "stock" (
    "sku" TEXT NOT NULL,
    "available" INTEGER NOT NULL DEFAULT 0,
    "reserved" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_pkey" PRIMARY KEY ("sku"),
    CONSTRAINT "stock_available_non_negative" CHECK ("available" >= 0),
    CONSTRAINT "stock_reserved_non_negative" CHECK ("reserved" >= 0)
);

-- CreateTable
CREATE TABLE "reservation" (
    "order_id" UUID NOT NULL,
    "line_no" INTEGER NOT NULL,
    "sku" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "status" "ReservationStatus" NOT NULL DEFAULT 'RESERVED',
    "reserved_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),

    CONSTRAINT "reservation_pkey" PRIMARY KEY ("order_id", "line_no"),
    CONSTRAINT "reservation_quantity_positive" CHECK ("quantity" > 0),
    CONSTRAINT "reservation_released_at_matches_status" CHECK (("status" = 'RELEASED') = ("released_at" IS NOT NULL))
);

-- CreateIndex
CREATE INDEX "reservation_sku_idx" ON "reservation"("sku");

-- AddForeignKey
ALTER TABLE "reservation" ADD CONSTRAINT "reservation_sku_fkey" FOREIGN KEY ("sku") REFERENCES "stock"("sku") ON DELETE RESTRICT ON UPDATE CASCADE;
