import type { PrismaClient } from './generated/prisma/client.js'

/**
 * The demo catalogue `SEED_CATALOGUE=true` seeds (services/inventory/README.md, "Demo catalogue"): enough of most skus
 * to order right away, and one scarce sku to see an out-of-stock cancellation.
 */
export const CATALOGUE: ReadonlyArray<{ sku: string; available: number }> = [
  { sku: 'TSHIRT-BLK-M', available: 100 },
  { sku: 'TSHIRT-WHT-L', available: 100 },
  { sku: 'MUG-001', available: 250 },
  { sku: 'CAP-RED', available: 50 },
  { sku: 'SOCKS-3PK', available: 500 },
  { sku: 'SIGNED-PRINT', available: 3 },
]

/**
 * Inserts the catalogue's skus that do not exist yet; existing rows (and their reservations) are
 * never touched, so a restart does not refill sold-out stock.
 *
 * @returns the number of skus inserted
 */
export async function seedCatalogue(prisma: Pick<PrismaClient, 'stock'>): Promise<number> {
  const { count } = await prisma.stock.createMany({ data: [...CATALOGUE], skipDuplicates: true })
  return count
}
