package io.warden.service;

import io.warden.service.config.BuildInfo;
import io.warden.service.config.ConfigException;
import io.warden.service.config.ConfigLoader;
import io.warden.service.config.WardenConfig;
import io.warden.service.zk.EmbeddedZooKeeper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.util.concurrent.CountDownLatch;
import org.apache.zookeeper.Version;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar warden-service.jar [--setting value]...}: one gateway, on an embedded ZooKeeper unless
 * {@code --zk} names an ensemble. Settings: {@link ConfigLoader}, {@code --help}, docs/configuration.md.
 * {@code java -jar warden-service.jar token-floor show|raise ...} is the operator's command for the cell's token floor
 * ({@link io.warden.service.cell.FloorCommand}).
 *
 * {@code --version} prints the gateway's Maven artifact version ({@link BuildInfo#version()}) and nothing else.
 *
 * <p>Exit status: 0 after {@code --help} or {@code --version}, 1 when start-up fails (a port in use, ZooKeeper out of reach), 2 for a
 * bad setting; after SIGTERM (SIGINT) the JVM's own 143 (130). Start-up failures are one line on stderr,
 * {@code warden: <what went wrong>}, with no stack trace (it is logged at DEBUG). SIGTERM or SIGINT drains the
 * gateway, then stops the embedded ZooKeeper.
 */
public final class Main {
    static final int EXIT_STARTUP_FAILED = 1;
    static final int EXIT_BAD_SETTING = 2;

    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("token-floor")) {
            // The operator's command for the token floor (docs/operations.md, "Recovering from a rolled-back ensemble").
            System.exit(io.warden.service.cell.FloorCommand.run(java.util.List.of(args).subList(1, args.length),
                    Settings.loader(), System.out, System.err));
            return;
        }
        if (ConfigLoader.helpRequested(args)) {
            System.out.print(ConfigLoader.usage());
            return;
        }
        if (ConfigLoader.versionRequested(args)) {
            System.out.println(BuildInfo.version());
            return;
        }
        ConfigLoader loader = Settings.loader();
        WardenConfig config;
        try {
            config = loader.load(args);
        } catch (ConfigException e) {
            fail(System.err, e.getMessage(), EXIT_BAD_SETTING);
            return;
        }
        for (String name : loader.unknownEnvironmentVariables()) {
            LOG.warn("Ignoring environment variable {}: no such setting (see --help)", name);
        }

        EmbeddedZooKeeper embedded = null;
        String connect = config.zkConnect();
        if (connect == null) {
            try {
                embedded = EmbeddedZooKeeper.start(config.dataDir(), config.embeddedZkPort());
            } catch (IOException | RuntimeException e) {
                LOG.debug("Embedded ZooKeeper did not start", e);
                fail(System.err, oneLine(e), EXIT_STARTUP_FAILED);
                return;
            }
            connect = embedded.connectString();
            LOG.info("No --zk given: started an embedded ZooKeeper {} on {} with its data in {}"
                            + " (a single server for trying Warden out; name an ensemble with --zk in production)",
                    Version.getVersion(), connect, embedded.directory());
        }

        Gateway gateway;
        try {
            gateway = Gateway.start(config.withZkConnect(connect));
        } catch (RuntimeException e) {
            LOG.debug("Gateway did not start", e);
            closeQuietly(embedded);
            fail(System.err, "could not start the gateway: " + startupFailure(e, config), EXIT_STARTUP_FAILED);
            return;
        }

        reloadOnSighup(gateway);
        CountDownLatch stopped = new CountDownLatch(1);
        EmbeddedZooKeeper zk = embedded;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(gateway, zk, stopped), "warden-shutdown"));

        String base = (config.tlsCert() == null ? "http://" : "https://") + urlHost(config.httpHost()) + ":" + gateway.httpPort();
        LOG.info("Warden gateway {} serving {} (console {}/console), ZooKeeper {}{} chroot {}",
                gateway.gatewayId(), base, base, connect, embedded != null ? " (embedded)," : ",", config.chroot());
        try {
            stopped.await(); // the gateway's threads serve; this thread only keeps the process up until a signal
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGHUP re-reads the auth file (as it is re-read when it changes); where the JVM offers no signals, nothing. */
    @SuppressWarnings("removal")
    private static void reloadOnSighup(Gateway gateway) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("HUP"), sig -> {
                LOG.info("SIGHUP: reading the auth file again");
                gateway.reloadAuthFile();
            });
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
            LOG.debug("SIGHUP cannot be handled here: {}", e.toString());
        }
    }

    /** The shutdown hook: drain (answer held calls, deregister), then close, then stop the embedded ZooKeeper. */
    private static void stop(Gateway gateway, EmbeddedZooKeeper embedded, CountDownLatch stopped) {
        LOG.info("Stopping: draining gateway {}", safeId(gateway));
        try {
            gateway.drain();
        } catch (RuntimeException e) {
            LOG.warn("Draining the gateway failed; closing it at once", e);
        }
        try {
            gateway.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing the gateway failed", e);
        }
        closeQuietly(embedded);
        LOG.info("Stopped");
        stopped.countDown();
    }

    private static String safeId(Gateway gateway) {
        try {
            return gateway.gatewayId();
        } catch (RuntimeException e) {
            return "?";
        }
    }

    private static void closeQuietly(EmbeddedZooKeeper embedded) {
        if (embedded == null) {
            return;
        }
        try {
            embedded.close();
        } catch (RuntimeException e) {
            LOG.warn("Stopping the embedded ZooKeeper failed", e);
        }
    }

    /** One line for a start-up failure: a port in use says which setting to change; anything else its causes. */
    static String startupFailure(Throwable e, WardenConfig config) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException) {
                return "cannot listen on " + config.httpHost() + ":" + config.httpPort() + ": "
                        + messageOf(t) + "; choose another --http-port (0 = any free port) or --http-host";
            }
        }
        return oneLine(e);
    }

    /** The message of {@code e}, then of each cause whose message adds something, on one line. */
    static String oneLine(Throwable e) {
        StringBuilder out = new StringBuilder(messageOf(e));
        int depth = 0;
        for (Throwable t = e.getCause(); t != null && t != t.getCause() && depth < 5; t = t.getCause(), depth++) {
            String m = messageOf(t);
            if (!out.toString().contains(m)) {
                out.append(": ").append(m);
            }
        }
        return out.toString().replaceAll("\\s*[\\r\\n]+\\s*", " ");
    }

    private static String messageOf(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m.strip();
    }

    private static String urlHost(String host) {
        if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            return "localhost";
        }
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private static void fail(PrintStream err, String message, int status) {
        err.println("warden: " + message);
        err.flush();
        System.exit(status);
    }
}
