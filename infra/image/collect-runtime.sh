#!/bin/sh
# Copies what the runtime image needs from a built workspace tree: per workspace its package.json,
# dist/ and (services) prisma/migrations/, plus the container healthcheck. The console's dist/ holds
# both its server (dist/server.js) and its built UI (dist/ui/, the bundle the server serves).
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
# The console without its UI would start, pass its health checks and answer 404 for every page: stop
# the build instead, naming what is missing.
if [ -d "$dest/services/console" ]; then
  for part in dist/server.js dist/ui; do
    if [ ! -e "$dest/services/console/$part" ]; then
      echo "collect-runtime: services/console/$part is missing: build @saga/console (server and UI) first" >&2
      exit 1
    fi
  done
fi
