package io.warden.service.zk;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.zookeeper.server.ContainerManager;
import org.apache.zookeeper.server.PurgeTxnLog;
import org.apache.zookeeper.server.RequestProcessor;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real, single ZooKeeper server (the release on the classpath, 3.9.x) running in this process, for trying
 * Warden out and for tests. It is not an ensemble: it has no redundancy, so production cells name their
 * ensemble with {@code --zk} instead.
 *
 * <ul>
 *   <li>Data: snapshots and transaction logs under {@code <dataDir>/zookeeper} (ZooKeeper adds {@code version-2/});
 *       a restart on the same directory finds every node again. A lock file there stops a second process (or a
 *       second instance in this process) from using the same directory. The three newest snapshots are kept;
 *       older ones and their logs are purged at start and hourly, on a thread of this server's that {@link #close()}
 *       waits for (ZooKeeper's own {@code DatadirCleanupManager} runs its purge on a timer it does not wait for, and
 *       a purge still running after close re-creates {@code version-2/} in a directory being deleted).</li>
 *   <li>Network: listens on {@code 127.0.0.1:<port>} only; port 0 picks a free port, see {@link #port()} and
 *       {@link #connectString()}. No limit on connections per host (every client is local). No AdminServer
 *       (ZooKeeper's is built on Jetty 9, which would clash with Javalin's Jetty 12 on the classpath).</li>
 *   <li>Session timeouts: ZooKeeper's defaults for tickTime 2000 ms, i.e. clients get 4 s to 40 s.</li>
 *   <li>TTL nodes: sets the JVM-wide system property {@code zookeeper.extendedTypesEnabled=true} (ZooKeeper
 *       reads it on every request), so {@code PERSISTENT_WITH_TTL} nodes work. It is harmless to other servers
 *       in the same JVM.</li>
 *   <li>Container and TTL nodes are reaped every {@code containerCheckInterval} (default 1 s, or the system
 *       property {@code znode.container.checkIntervalMs}), instead of ZooKeeper's 60 s, so empty lock nodes
 *       vanish promptly.</li>
 * </ul>
 *
 * <p>Concurrency: {@link #start} builds a running server; {@link #close()} may be called from any thread, more
 * than once (later calls do nothing).
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedZooKeeper.class);

    /** ZooKeeper's system property for TTL nodes (and the other extended types). */
    public static final String EXTENDED_TYPES_PROPERTY = "zookeeper.extendedTypesEnabled";
    /** Honoured as ZooKeeperServerMain honours it, but with a default of 1 s instead of 60 s. */
    public static final String CONTAINER_CHECK_INTERVAL_PROPERTY = "znode.container.checkIntervalMs";
    public static final Duration DEFAULT_CONTAINER_CHECK_INTERVAL = Duration.ofSeconds(1);

    private static final int TICK_TIME_MS = 2000;
    private static final int CONTAINER_MAX_DELETES_PER_MINUTE = 10_000;
    private static final int SNAPSHOTS_KEPT = 3;
    private static final Duration PURGE_INTERVAL = Duration.ofHours(1);
    private static final Duration PURGE_STOP_PATIENCE = Duration.ofSeconds(30);
    private static final String LOCK_FILE = "warden-embedded.lock";

    private final Path directory;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final FileTxnSnapLog txnLog;
    private final ServerCnxnFactory factory;
    private final ContainerManager containers;
    private final ScheduledExecutorService purger;
    private final int port;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EmbeddedZooKeeper(Path directory, FileChannel lockChannel, FileLock lock, FileTxnSnapLog txnLog,
            ServerCnxnFactory factory, ContainerManager containers, ScheduledExecutorService purger) {
        this.directory = directory;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.txnLog = txnLog;
        this.factory = factory;
        this.containers = containers;
        this.purger = purger;
        this.port = factory.getLocalPort();
    }

    /** {@link #start(Path, int, Duration)} with the container check interval of the system property, or 1 s. */
    public static EmbeddedZooKeeper start(Path dataDir, int port) throws IOException {
        long ms = Long.getLong(CONTAINER_CHECK_INTERVAL_PROPERTY, DEFAULT_CONTAINER_CHECK_INTERVAL.toMillis());
        return start(dataDir, port, Duration.ofMillis(ms));
    }

    /**
     * Starts the server and returns once it accepts connections.
     *
     * @param dataDir                Warden's data directory; the server uses {@code dataDir/zookeeper}, made if missing
     * @param port                   client port on 127.0.0.1, 0 for any free port
     * @param containerCheckInterval how often empty container nodes and expired TTL nodes are deleted
     * @throws IOException with a one-line message naming the directory or the address when the directory cannot be
     *                     used (missing permissions, in use by another server) or the port cannot be bound
     */
    public static EmbeddedZooKeeper start(Path dataDir, int port, Duration containerCheckInterval) throws IOException {
        return start(dataDir, port, containerCheckInterval, PURGE_INTERVAL);
    }

    /** As {@link #start(Path, int, Duration)}, purging old snapshots every {@code purgeInterval} (tests). */
    static EmbeddedZooKeeper start(Path dataDir, int port, Duration containerCheckInterval, Duration purgeInterval)
            throws IOException {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be 0-65535, was " + port);
        }
        if (containerCheckInterval.isNegative() || containerCheckInterval.isZero()
                || containerCheckInterval.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("containerCheckInterval must be 1 ms to 24 days, was " + containerCheckInterval);
        }
        Path directory = dataDir.toAbsolutePath().normalize().resolve("zookeeper");
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new IOException("cannot create the embedded ZooKeeper's data directory " + directory + ": "
                    + describe(e), e);
        }
        FileChannel lockChannel = FileChannel.open(directory.resolve(LOCK_FILE),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = null;
        FileTxnSnapLog txnLog = null;
        ServerCnxnFactory factory = null;
        ContainerManager containers = null;
        ScheduledExecutorService purger = null;
        try {
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new IOException("the data directory " + directory + " is in use by another embedded ZooKeeper"
                        + " (another Warden process?); stop it or choose another --data-dir");
            }
            System.setProperty(EXTENDED_TYPES_PROPERTY, "true");

            txnLog = new FileTxnSnapLog(directory.toFile(), directory.toFile());
            Server server = new Server(txnLog);
            factory = ServerCnxnFactory.createFactory();
            InetSocketAddress address = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port);
            try {
                // 0 = no limit on connections per client host: every client of this server is local.
                factory.configure(address, 0, -1, false);
            } catch (BindException e) {
                throw new IOException("the embedded ZooKeeper cannot listen on 127.0.0.1:" + port + ": " + describe(e)
                        + "; choose another --embedded-zk-port (0 = any free port) or name an ensemble with --zk", e);
            }
            factory.startup(server); // loads the data directory, then serves

            containers = new ContainerManager(server.getZKDatabase(), server.firstProcessor(),
                    (int) containerCheckInterval.toMillis(), CONTAINER_MAX_DELETES_PER_MINUTE, 0);
            containers.start();
            purge(directory);
            purger = Executors.newSingleThreadScheduledExecutor(task -> {
                Thread thread = new Thread(task, "warden-zk-purge");
                thread.setDaemon(true);
                return thread;
            });
            Path purged = directory;
            purger.scheduleWithFixedDelay(() -> purge(purged), purgeInterval.toMillis(), purgeInterval.toMillis(),
                    TimeUnit.MILLISECONDS);

            EmbeddedZooKeeper zk = new EmbeddedZooKeeper(directory, lockChannel, lock, txnLog, factory, containers,
                    purger);
            LOG.debug("Embedded ZooKeeper serving 127.0.0.1:{} from {}", zk.port, directory);
            return zk;
        } catch (IOException | RuntimeException e) {
            stopQuietly(e, containers, purger, factory, txnLog, lock, lockChannel);
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            IOException failure = new IOException("interrupted while starting the embedded ZooKeeper", e);
            stopQuietly(failure, containers, purger, factory, txnLog, lock, lockChannel);
            throw failure;
        }
    }

    /** The port the server listens on (the real one when started with port 0). */
    public int port() {
        return port;
    }

    /** {@code 127.0.0.1:<port>}, for Curator or {@code --zk}. */
    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /** Where the snapshots and transaction logs live: {@code <dataDir>/zookeeper}. */
    public Path directory() {
        return directory;
    }

    /** Stops the server: closes client connections, flushes and closes the transaction log, releases the lock file. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = new IllegalStateException("stopping the embedded ZooKeeper at " + directory + " failed");
        stopQuietly(failure, containers, purger, factory, txnLog, lock, lockChannel);
        if (failure.getSuppressed().length > 0) {
            LOG.warn("Embedded ZooKeeper at {} did not stop cleanly", directory, failure);
        }
        LOG.debug("Embedded ZooKeeper on 127.0.0.1:{} stopped", port);
    }

    /** Stops whatever was started, in reverse order; every failure is added to {@code primary}, none thrown. */
    /** Keeps the {@value #SNAPSHOTS_KEPT} newest snapshots and the logs they need; a failure is logged, not thrown. */
    private static void purge(Path directory) {
        try {
            PurgeTxnLog.purge(directory.toFile(), directory.toFile(), SNAPSHOTS_KEPT);
        } catch (IOException | RuntimeException e) {
            LOG.warn("purging old snapshots in {} failed; will try again in {}", directory, PURGE_INTERVAL, e);
        }
    }

    private static void stopQuietly(Throwable primary, ContainerManager containers, ScheduledExecutorService purger,
            ServerCnxnFactory factory, FileTxnSnapLog txnLog, FileLock lock, FileChannel lockChannel) {
        if (containers != null) {
            attempt(primary, containers::stop);
        }
        if (purger != null) {
            attempt(primary, () -> {
                purger.shutdownNow();
                if (!purger.awaitTermination(PURGE_STOP_PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("a snapshot purge still runs after " + PURGE_STOP_PATIENCE);
                }
            });
        }
        if (factory != null) {
            // Also shuts the ZooKeeperServer down (sessions, request processors, database).
            attempt(primary, factory::shutdown);
        }
        if (txnLog != null) {
            attempt(primary, txnLog::close);
        }
        if (lock != null) {
            attempt(primary, lock::release);
        }
        attempt(primary, lockChannel::close);
    }

    private interface Step {
        void run() throws Exception;
    }

    private static void attempt(Throwable primary, Step step) {
        try {
            step.run();
        } catch (Exception e) {
            primary.addSuppressed(e);
        }
    }

    private static String describe(IOException e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }

    /** Exposes the first request processor, which the {@link ContainerManager} submits its deletes to. */
    private static final class Server extends ZooKeeperServer {
        Server(FileTxnSnapLog txnLog) {
            super(txnLog, TICK_TIME_MS, "");
        }

        RequestProcessor firstProcessor() {
            return firstProcessor;
        }
    }
}
