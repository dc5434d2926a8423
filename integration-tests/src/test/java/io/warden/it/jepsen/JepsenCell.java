package io.warden.it.jepsen;

import io.warden.it.support.GatewayProcess;
import io.warden.it.support.JavaLauncher;
import io.warden.it.support.LinkProxy;
import io.warden.it.support.LoopbackPorts;
import io.warden.it.support.ZkEnsemble;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The cell the proof suite runs against, every part its own process, every link through a {@link LinkProxy} that a
 * nemesis can cut: a 3-server ZooKeeper ensemble whose servers reach each other's quorum port through proxies
 * ({@link ZkEnsemble.Options#withProxiedQuorum()}); gateways each reaching every ZooKeeper server through its own
 * proxy ({@link #zkLink}); clients reaching each gateway through a proxy ({@link #clientLink}) that stays put when the
 * gateway behind it is restarted elsewhere. For the large-lock nemesis the gateways run with small limits of a lock's
 * size ({@code --zk-max-packet-bytes} {@value LockPile#PACKET_BYTES}, {@code --max-entries-per-lock}
 * {@value LockPile#MAX_ENTRIES}), so that it needs a few hundred entries (gateways built before those settings refuse
 * them: leave that nemesis out to run against them).
 *
 * <p>Concurrency: the nemesis thread and the test thread use it; the gateway list is guarded by {@code this}.
 */
final class JepsenCell implements AutoCloseable {
    static final long ZK_SESSION_TIMEOUT_MS = 4000;

    final JavaLauncher launcher;
    final ZkEnsemble zk;
    private final String fault;
    private final boolean smallLocks;
    private final LinkProxy[][] zkLinks;
    private final LinkProxy[] clientLinks;
    private final GatewayProcess[] gateways;
    private final int[] restarts;

    private JepsenCell(JavaLauncher launcher, ZkEnsemble zk, int gatewayCount, String fault, boolean smallLocks) {
        this.launcher = launcher;
        this.zk = zk;
        this.fault = fault;
        this.smallLocks = smallLocks;
        this.zkLinks = new LinkProxy[gatewayCount][zk.size()];
        this.clientLinks = new LinkProxy[gatewayCount];
        this.gateways = new GatewayProcess[gatewayCount];
        this.restarts = new int[gatewayCount];
    }

    /**
     * Starts everything and waits for a quorum and ready gateways; {@code fault}: a {@link BrokenGateway} bug's name, or null;
     * {@code smallLocks}: the gateways' small limits of a lock's size, for {@link LockPile}.
     */
    static JepsenCell start(String run, int gatewayCount, String fault, boolean smallLocks) {
        JavaLauncher launcher = JavaLauncher.forRun(run);
        ZkEnsemble zk = ZkEnsemble.start(launcher, 3, ZkEnsemble.Options.defaults().withProxiedQuorum());
        JepsenCell cell = new JepsenCell(launcher, zk, gatewayCount, fault, smallLocks);
        try {
            zk.awaitQuorum(Duration.ofSeconds(60));
            for (int g = 0; g < gatewayCount; g++) {
                for (int s = 0; s < zk.size(); s++) {
                    cell.zkLinks[g][s] = new LinkProxy("gw" + (g + 1) + "-zk" + (s + 1), zk.clientPort(s));
                }
                cell.gateways[g] = cell.launch(g);
                cell.clientLinks[g] = new LinkProxy("client-gw" + (g + 1), cell.gateways[g].httpPort());
            }
            for (GatewayProcess gw : cell.gateways) {
                gw.awaitReady(Duration.ofSeconds(60));
            }
        } catch (RuntimeException e) {
            cell.close();
            throw e;
        }
        return cell;
    }

    private GatewayProcess launch(int g) {
        List<String> hosts = new ArrayList<>();
        for (LinkProxy link : zkLinks[g]) {
            hosts.add(LoopbackPorts.HOST + ":" + link.port());
        }
        List<String> jvm = new ArrayList<>(List.of("-Xms64m", "-Xmx384m", "-Dlogback.configurationFile="
                + launcher.logbackConfig("gateway", "INFO", Map.of("io.warden", "DEBUG", "org.apache.zookeeper", "WARN",
                "org.eclipse.jetty", "WARN"))));
        String id = "gw" + (g + 1) + (restarts[g] == 0 ? "" : "-r" + restarts[g]);
        // Small limits, so that a pile of a few hundred entries does what tens of thousands do at the defaults
        // (LockPile): the gateways list locks of up to 379 entries and admit 200.
        List<String> args = !smallLocks ? List.of() : List.of("--zk-max-packet-bytes",
                Integer.toString(LockPile.PACKET_BYTES), "--max-entries-per-lock", Integer.toString(LockPile.MAX_ENTRIES));
        if (fault == null) {
            return GatewayProcess.start(launcher, id, String.join(",", hosts), ZK_SESSION_TIMEOUT_MS, jvm, args);
        }
        jvm.add("-D" + BrokenGateway.PROPERTY + "=" + fault);
        return GatewayProcess.start(launcher, id, String.join(",", hosts), ZK_SESSION_TIMEOUT_MS, jvm, args,
                BrokenGateway.class.getName());
    }

    int gatewayCount() {
        return gateways.length;
    }

    /** What clients use: each gateway through its client link. */
    List<URI> endpoints() {
        List<URI> uris = new ArrayList<>();
        for (LinkProxy link : clientLinks) {
            uris.add(URI.create("http://" + LoopbackPorts.HOST + ":" + link.port()));
        }
        return uris;
    }

    LinkProxy zkLink(int gateway, int server) {
        return zkLinks[gateway][server];
    }

    LinkProxy clientLink(int gateway) {
        return clientLinks[gateway];
    }

    synchronized GatewayProcess gateway(int g) {
        return gateways[g];
    }

    /** kill -9 of gateway {@code g}. */
    synchronized void killGateway(int g) {
        gateways[g].kill9();
    }

    /** Starts gateway {@code g} again (a new id: the leader adopts the old one's sessions), behind the same client link. */
    synchronized void restartGateway(int g) {
        restarts[g]++;
        gateways[g] = launch(g);
        gateways[g].awaitReady(Duration.ofSeconds(60));
        clientLinks[g].retarget(gateways[g].httpPort());
        clientLinks[g].reset();
    }

    /** Every link of gateway {@code g} to ZooKeeper black-holed: a one-sided partition (its clients still reach it). */
    void cutFromZooKeeper(int g) {
        for (LinkProxy link : zkLinks[g]) {
            link.blackhole();
        }
    }

    void healZooKeeperLinks(int g) {
        for (LinkProxy link : zkLinks[g]) {
            link.heal();
        }
    }

    /**
     * Server {@code s} cut from the other servers' quorum and election links, both ways (a minority of one, or the
     * leader: the others elect a new one while it still runs).
     */
    void isolateServer(int s) {
        for (int o = 0; o < zk.size(); o++) {
            if (o != s) {
                cutServerLink(s, o);
                cutServerLink(o, s);
            }
        }
    }

    /** Every server cut from every other: no side has a majority, so the ensemble serves nobody until it heals. */
    void splitEveryServer() {
        for (int a = 0; a < zk.size(); a++) {
            for (int b = 0; b < zk.size(); b++) {
                if (a != b) {
                    cutServerLink(a, b);
                }
            }
        }
    }

    private void cutServerLink(int from, int to) {
        zk.quorumLink(from, to).blackhole();
        zk.electionLink(from, to).blackhole();
    }

    void healQuorumLinks() {
        for (int a = 0; a < zk.size(); a++) {
            for (int b = 0; b < zk.size(); b++) {
                if (a != b) {
                    zk.quorumLink(a, b).heal();
                    zk.electionLink(a, b).heal();
                }
            }
        }
    }

    /** Gateway {@code g} stopped as an operator stops it (SIGTERM: it drains and hands its sessions on), then started. */
    synchronized void restartGatewayGracefully(int g) {
        gateways[g].terminate();
        if (!gateways[g].process().awaitExit(Duration.ofSeconds(30))) {
            throw new IllegalStateException("gateway " + gateways[g].gatewayId() + " did not stop within 30 s of SIGTERM");
        }
        restartGateway(g);
    }

    /** Waits until ZooKeeper has a quorum and every gateway is ready again. */
    void awaitHealthy(Duration timeout) {
        zk.awaitQuorum(timeout);
        for (int g = 0; g < gateways.length; g++) {
            gateway(g).awaitReady(timeout);
        }
    }

    @Override
    public synchronized void close() {
        for (GatewayProcess gw : gateways) {
            if (gw != null) {
                gw.close();
            }
        }
        for (LinkProxy link : clientLinks) {
            if (link != null) {
                link.close();
            }
        }
        for (LinkProxy[] links : zkLinks) {
            for (LinkProxy link : links) {
                if (link != null) {
                    link.close();
                }
            }
        }
        zk.close();
    }
}
