package io.warden.it.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A ZooKeeper ensemble of real {@code QuorumPeerMain} processes on loopback ports, each with its own data dir,
 * {@code myid} and {@code zoo.cfg} ({@code extendedTypesEnabled=true}, AdminServer off, 4lw {@code srvr,ruok,mntr}).
 * The leader is found with the {@code srvr} four-letter word.
 *
 * <p>Concurrency: methods are {@code synchronized}; the test thread drives faults while client threads only
 * read {@link #connectString()}.
 */
public final class ZkEnsemble implements AutoCloseable {
    /** How a server reports itself through {@code srvr}. */
    public enum Mode { LEADER, FOLLOWER, STANDALONE, NOT_SERVING, DOWN }

    private final JavaLauncher launcher;
    private final int size;
    private final Path dataRoot;
    private final int[] clientPorts;
    private final Path[] configs;
    private final List<String> jvmArgs;
    private final String serverClasspath;
    /** {@code quorumLinks[i][j]}: the proxy server i uses to reach server j's quorum port; null without proxies. */
    private final LinkProxy[][] quorumLinks;
    /** {@code electionLinks[i][j]}: likewise for server j's leader-election port; null without proxies. */
    private final LinkProxy[][] electionLinks;
    // Guarded by this.
    private final ChildProcess[] servers;

    private ZkEnsemble(JavaLauncher launcher, int size, Options options) {
        this.launcher = launcher;
        this.size = size;
        this.clientPorts = new int[size];
        this.configs = new Path[size];
        this.servers = new ChildProcess[size];
        try {
            this.dataRoot = Files.createTempDirectory("warden-zk-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int[] quorumPorts = new int[size];
        int[] electionPorts = new int[size];
        for (int i = 0; i < size; i++) {
            clientPorts[i] = LoopbackPorts.free();
            quorumPorts[i] = LoopbackPorts.free();
            electionPorts[i] = LoopbackPorts.free();
        }
        this.quorumLinks = options.proxiedQuorum ? new LinkProxy[size][size] : null;
        this.electionLinks = options.proxiedQuorum ? new LinkProxy[size][size] : null;
        for (int i = 0; i < size; i++) {
            // Each server's view of the others: through a proxy of its own when asked for, so that one server's
            // link to another (say a follower's to its leader) can be delayed or cut alone.
            StringBuilder serverLines = new StringBuilder();
            for (int j = 0; j < size; j++) {
                int quorumPort = quorumPorts[j];
                int electionPort = electionPorts[j];
                if (quorumLinks != null && i != j) {
                    quorumLinks[i][j] = new LinkProxy("zk" + (i + 1) + "-to-zk" + (j + 1), quorumPorts[j]);
                    quorumPort = quorumLinks[i][j].port();
                    electionLinks[i][j] = new LinkProxy("zk" + (i + 1) + "-to-zk" + (j + 1) + "-election", electionPorts[j]);
                    electionPort = electionLinks[i][j].port();
                }
                serverLines.append("server.").append(j + 1).append('=').append(LoopbackPorts.HOST).append(':')
                        .append(quorumPort).append(':').append(electionPort).append('\n');
            }
            Path dir = dataRoot.resolve("zk" + (i + 1));
            try {
                Files.createDirectories(dir);
                Files.writeString(dir.resolve("myid"), Integer.toString(i + 1) + "\n");
                String cfg = "tickTime=" + options.tickTimeMs + "\n"
                        + "initLimit=10\n"
                        + "syncLimit=5\n"
                        + "dataDir=" + dir + "\n"
                        + "clientPort=" + clientPorts[i] + "\n"
                        + "clientPortAddress=" + LoopbackPorts.HOST + "\n"
                        + "maxClientCnxns=0\n"
                        + "admin.enableServer=false\n"
                        + "4lw.commands.whitelist=srvr,ruok,mntr\n"
                        + "extendedTypesEnabled=true\n"
                        + "reconfigEnabled=false\n"
                        + "standaloneEnabled=false\n"
                        + "forceSync=" + (options.forceSync ? "yes" : "no") + "\n"
                        + "autopurge.purgeInterval=0\n"
                        + serverLines;
                configs[i] = dir.resolve("zoo.cfg");
                Files.writeString(configs[i], cfg);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        List<String> args = new ArrayList<>(options.jvmArgs);
        args.add("-Dlogback.configurationFile=" + launcher.logbackConfig("INFO"));
        args.add("-Dzookeeper.jmx.log4j.disable=true");
        args.add("-Dznode.container.checkIntervalMs=1000");
        args.add("-Djava.net.preferIPv4Stack=true");
        this.jvmArgs = List.copyOf(args);
        this.serverClasspath = options.serverClasspath != null ? options.serverClasspath : JavaLauncher.classpath();
    }

    /**
     * Tuning of the servers. With {@code proxiedQuorum} every server reaches every other's quorum port (the
     * leader-follower link) and election port through proxies of its own: see {@link #quorumLink(int, int)} and
     * {@link #electionLink(int, int)}.
     */
    public record Options(int tickTimeMs, boolean forceSync, List<String> jvmArgs, boolean proxiedQuorum,
                          String serverClasspath) {
        public Options(int tickTimeMs, boolean forceSync, List<String> jvmArgs) {
            this(tickTimeMs, forceSync, jvmArgs, false, null);
        }

        public Options(int tickTimeMs, boolean forceSync, List<String> jvmArgs, boolean proxiedQuorum) {
            this(tickTimeMs, forceSync, jvmArgs, proxiedQuorum, null);
        }

        public static Options defaults() {
            return new Options(1000, true, List.of("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC"));
        }

        public Options withProxiedQuorum() {
            return new Options(tickTimeMs, forceSync, jvmArgs, true, serverClasspath);
        }

        /**
         * The servers run on {@code classpath} instead of this JVM's (null: this JVM's), e.g. another ZooKeeper
         * release's ({@link ZooKeeperRelease#serverClasspath()}).
         */
        public Options withServerClasspath(String classpath) {
            return new Options(tickTimeMs, forceSync, jvmArgs, proxiedQuorum, classpath);
        }
    }

    /**
     * The proxy on the link server {@code from} opens to server {@code to}'s quorum port: when {@code to} leads, the
     * follower {@code from}'s whole replication stream (proposals, commits, sync replies) comes down it.
     */
    public LinkProxy quorumLink(int from, int to) {
        if (quorumLinks == null || from == to) {
            throw new IllegalStateException("no proxy from zk" + (from + 1) + " to zk" + (to + 1)
                    + " (start with Options.withProxiedQuorum())");
        }
        return quorumLinks[from][to];
    }

    /** The proxy on the link server {@code from} opens to server {@code to}'s leader-election port. */
    public LinkProxy electionLink(int from, int to) {
        quorumLink(from, to); // the same precondition
        return electionLinks[from][to];
    }

    /** Starts {@code size} servers (does not wait for a quorum: see {@link #awaitQuorum(Duration)}). */
    public static ZkEnsemble start(JavaLauncher launcher, int size) {
        return start(launcher, size, Options.defaults());
    }

    public static ZkEnsemble start(JavaLauncher launcher, int size, Options options) {
        ZkEnsemble ensemble = new ZkEnsemble(launcher, size, options);
        for (int i = 0; i < size; i++) {
            ensemble.startServer(i);
        }
        return ensemble;
    }

    public int size() {
        return size;
    }

    /** {@code 127.0.0.1:p1,127.0.0.1:p2,...} of every server, running or not. */
    public String connectString() {
        List<String> hosts = new ArrayList<>();
        for (int port : clientPorts) {
            hosts.add(LoopbackPorts.HOST + ":" + port);
        }
        return String.join(",", hosts);
    }

    public int clientPort(int index) {
        return clientPorts[index];
    }

    public Path dataRoot() {
        return dataRoot;
    }

    public synchronized ChildProcess server(int index) {
        return servers[index];
    }

    public synchronized boolean isRunning(int index) {
        return servers[index] != null && servers[index].isAlive();
    }

    /** Starts server {@code index} (0-based) again with its old data dir. */
    public synchronized void restart(int index) {
        if (isRunning(index)) {
            throw new IllegalStateException("zk" + (index + 1) + " is still running");
        }
        startServer(index);
    }

    /** kill -9 of server {@code index}. */
    public synchronized void kill(int index) {
        ChildProcess server = servers[index];
        if (server != null) {
            server.kill9();
        }
    }

    /** SIGSTOP / SIGCONT of server {@code index}. */
    public synchronized void pause(int index) {
        servers[index].pause();
    }

    public synchronized void resume(int index) {
        servers[index].resume();
    }

    /** The index of the current leader, if exactly one running server says it leads. */
    public synchronized Optional<Integer> leader() {
        Integer leader = null;
        for (int i = 0; i < size; i++) {
            if (isRunning(i) && mode(i) == Mode.LEADER) {
                if (leader != null) {
                    return Optional.empty();
                }
                leader = i;
            }
        }
        return Optional.ofNullable(leader);
    }

    /** Waits for a leader, then kill -9s it and returns its index. */
    public int killLeader(Duration timeout) {
        int[] found = new int[1];
        Await.until("a ZooKeeper leader", timeout, Duration.ofMillis(100), () -> {
            Optional<Integer> leader = leader();
            leader.ifPresent(l -> found[0] = l);
            return leader.isPresent();
        }, this::describe);
        kill(found[0]);
        return found[0];
    }

    /**
     * Waits until the running servers form a quorum: a majority of the ensemble is running and serving, exactly
     * one of them is the leader and every running server is a leader or a follower.
     */
    public void awaitQuorum(Duration timeout) {
        Await.until("a ZooKeeper quorum", timeout, Duration.ofMillis(100), this::hasQuorum, this::describe);
    }

    private synchronized boolean hasQuorum() {
        int leaders = 0;
        int serving = 0;
        for (int i = 0; i < size; i++) {
            if (!isRunning(i)) {
                continue;
            }
            Mode mode = mode(i);
            if (mode == Mode.LEADER) {
                leaders++;
                serving++;
            } else if (mode == Mode.FOLLOWER) {
                serving++;
            } else {
                return false;
            }
        }
        return leaders == 1 && serving > size / 2;
    }

    /** e.g. {@code zk1=FOLLOWER zk2=LEADER zk3=DOWN}. */
    public synchronized String describe() {
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            parts.add("zk" + (i + 1) + "=" + (isRunning(i) ? mode(i) : Mode.DOWN));
        }
        return String.join(" ", parts) + " (logs in " + launcher.logDir() + ")";
    }

    /** What {@code srvr} says about server {@code index}. */
    public Mode mode(int index) {
        String reply = fourLetterWord(clientPorts[index], "srvr");
        if (reply == null) {
            return Mode.DOWN;
        }
        for (String line : reply.split("\n")) {
            if (line.startsWith("Mode:")) {
                return switch (line.substring("Mode:".length()).trim()) {
                    case "leader" -> Mode.LEADER;
                    case "follower" -> Mode.FOLLOWER;
                    case "standalone" -> Mode.STANDALONE;
                    default -> Mode.NOT_SERVING;
                };
            }
        }
        return Mode.NOT_SERVING;
    }

    /** The numeric values {@code mntr} reports for server {@code index} (e.g. {@code zk_packets_received}); empty if down. */
    public Map<String, Long> mntr(int index) {
        Map<String, Long> values = new LinkedHashMap<>();
        String reply = fourLetterWord(clientPorts[index], "mntr");
        if (reply == null) {
            return values;
        }
        for (String line : reply.split("\n")) {
            String[] parts = line.split("\t");
            if (parts.length == 2) {
                try {
                    values.put(parts[0].trim(), Long.parseLong(parts[1].trim()));
                } catch (NumberFormatException ignored) {
                    // a text value, e.g. zk_server_state
                }
            }
        }
        return values;
    }

    /** Sends a four-letter word to a loopback port; null if nobody answers. */
    public static String fourLetterWord(int port, String word) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(LoopbackPorts.HOST, port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }

    private void startServer(int index) {
        servers[index] = launcher.startMain("zk" + (index + 1), jvmArgs, serverClasspath,
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", List.of(configs[index].toString()));
    }

    /** Kills every server (logs are kept; the temp data dirs are removed). */
    @Override
    public synchronized void close() {
        for (int i = 0; i < size; i++) {
            if (servers[i] != null) {
                servers[i].close();
            }
            for (int j = 0; quorumLinks != null && j < size; j++) {
                if (quorumLinks[i][j] != null) {
                    quorumLinks[i][j].close();
                    electionLinks[i][j].close();
                }
            }
        }
        deleteRecursively(dataRoot);
    }

    private static void deleteRecursively(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // temp dir: best effort
                }
            });
        } catch (IOException ignored) {
            // temp dir: best effort
        }
    }
}
