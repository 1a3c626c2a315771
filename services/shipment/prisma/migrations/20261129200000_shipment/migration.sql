-- Shipments booked with the simulated carrier: at most one per order (a redelivered StockReserved,
-- or the same order reserved twice, never books a second parcel).

-- CreateEnum
CREATE TYPE "ShipmentStatus" AS ENUM ('CREATED');

-- CreateTable
CREATE TABLE "shipment" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "carrier" TEXT NOT NULL,
    "carrier_account" TEXT NOT NULL,
    "tracking_number" TEXT NOT NULL,
    "status" "ShipmentStatus" NOT NULL DEFAULT 'CREATED',
    "country" CHAR(2) NOT NULL,
    "address" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "shipment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "shipment_order_id_key" ON "shipment"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "shipment_tracking_number_key" ON "shipment"("tracking_number");
