#!/bin/sh
# Copies what the runtime image needs from a built workspace tree: per workspace its package.json,
# dist/ and (services) prisma/migrations/, plus the container healthcheck.
# No sources, tests or configs. Used by the Dockerfile's build stage and by
# packages/fleet/test/image.int.test.ts, so the check assembles exactly what the image holds.
#   collect-runtime.sh <built repo> <destination>
# The destination must already hold the root package.json of `turbo prune` (its explicit workspace
# list names what to copy).
set -eu
src=$1
dest=$2
cp "$(dirname "$0")/healthcheck.js" "$dest/"
workspaces=$(node -p "require('$dest/package.json').workspaces.join(' ')")
for ws in $workspaces; do
  mkdir -p "$dest/$ws"
  cp "$src/$ws/package.json" "$dest/$ws/"
  if [ -d "$src/$ws/dist" ]; then cp -R "$src/$ws/dist" "$dest/$ws/dist"; fi
  if [ -d "$src/$ws/prisma/migrations" ]; then
    mkdir -p "$dest/$ws/prisma"
    cp -R "$src/$ws/prisma/migrations" "$dest/$ws/prisma/migrations"
  fi
done
