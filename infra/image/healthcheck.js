// Container healthcheck without curl in the image: `node healthcheck.js http://127.0.0.1:3001/health/ready`
// exits 0 on a 2xx answer within 3 s, 1 otherwise.
const url = process.argv[2]
if (!url) {
  console.error('usage: node healthcheck.js <url>')
  process.exit(2)
}
fetch(url, { signal: AbortSignal.timeout(3000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
)
