/**
 * One service's database on CloudNativePG: the Cluster, archiving its WAL and base backups to an
 * object store through the Barman Cloud plugin, a daily ScheduledBackup, and the PodMonitor that
 * scrapes its instances (the Cluster's own `enablePodMonitor` is deprecated in favour of this).
 */
import type { ServiceName } from '../src/bootstrap.js'
import { dbCluster, meta, type Manifest } from './common.js'

/** The CNPG-I plugin that archives WAL and takes base backups to an object store. */
export const BARMAN_PLUGIN = 'barman-cloud.cloudnative-pg.io'
/** The one ObjectStore all four clusters write to, each below its own cluster name. */
export const BACKUP_STORE = 'saga-backups'
/** The Secret a person creates with the object store's keys (docs/deploy.md, step 3). */
export const BACKUP_SECRET = 'backup-object-store'

/**
 * The object store of the WAL archive and the base backups: S3 or any S3 API (MinIO, Ceph). The
 * bucket in `destinationPath` is set per overlay; the keys come from the Secret `backup-object-store`
 * (ACCESS_KEY_ID, ACCESS_SECRET_KEY). Backups and WAL older than 30 days are removed, keeping what the
 * oldest backup in the window needs.
 */
export function backupStore(): Manifest {
  return {
    apiVersion: 'barmancloud.cnpg.io/v1',
    kind: 'ObjectStore',
    metadata: meta(BACKUP_STORE, 'backup'),
    spec: {
      retentionPolicy: '30d',
      configuration: {
        destinationPath: 's3://set-me-in-the-overlay/saga',
        s3Credentials: {
          accessKeyId: { name: BACKUP_SECRET, key: 'ACCESS_KEY_ID' },
          secretAccessKey: { name: BACKUP_SECRET, key: 'ACCESS_SECRET_KEY' },
        },
        wal: { compression: 'gzip' },
        data: { compression: 'gzip' },
      },
    },
  }
}

function cluster(s: ServiceName): Manifest {
  return {
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: meta(dbCluster(s), 'database'),
    spec: {
      instances: 3,
      imageName: 'ghcr.io/cloudnative-pg/postgresql:17.6',
      // One database and one owner role per cluster: the service's role reaches no other data.
      bootstrap: { initdb: { database: `${s}_service`, owner: `${s}_service` } },
      enableSuperuserAccess: false,
      storage: { size: '10Gi' },
      // Per-role session limits (statement_timeout, lock_timeout, ...) belong in postgresql.parameters
      // or the role; they are decided with the database's owners, not here.
      postgresql: { parameters: { max_connections: '200' } },
      // Continuous WAL archiving: point-in-time recovery to any moment after the oldest base backup.
      plugins: [{ name: BARMAN_PLUGIN, isWALArchiver: true, parameters: { barmanObjectName: BACKUP_STORE } }],
    },
  }
}

/** The Cluster, its daily base backup and its PodMonitor. */
export function databaseManifests(s: ServiceName): Manifest[] {
  return [
    cluster(s),
    {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'ScheduledBackup',
      metadata: meta(dbCluster(s), 'backup'),
      spec: {
        cluster: { name: dbCluster(s) },
        // Six fields, seconds first (robfig/cron): every day at 02:00 UTC; one at once on creation.
        schedule: '0 0 2 * * *',
        immediate: true,
        method: 'plugin',
        pluginConfiguration: { name: BARMAN_PLUGIN },
        target: 'prefer-standby',
        backupOwnerReference: 'self',
      },
    },
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      // Not the cluster's own name: the operator deletes a PodMonitor of that name it once made (with
      // enablePodMonitor), and an apply over it would keep the operator as its owner.
      metadata: meta(`${dbCluster(s)}-metrics`, 'database', dbCluster(s)),
      spec: {
        selector: { matchLabels: { 'cnpg.io/cluster': dbCluster(s) } },
        podMetricsEndpoints: [{ port: 'metrics' }],
      },
    },
  ]
}
