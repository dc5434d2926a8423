package io.warden.service.cell;

import io.warden.service.config.ConfigException;
import io.warden.service.config.ConfigLoader;
import io.warden.service.config.WardenConfig;
import io.warden.service.zk.CellLayout;
import io.warden.service.zk.CellPaths;
import io.warden.service.zk.Json;
import io.warden.service.zk.ZkSecurity;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator's command for the token floor, straight on ZooKeeper (no gateway needed, so it also works while every
 * gateway refuses the cell, or before the first one starts on a new ensemble):
 * <pre>
 * java -jar warden-service.jar token-floor show  [--zk ... --chroot ... and the zk-tls / zk-sasl settings]
 * java -jar warden-service.jar token-floor raise --above TOKEN [settings]
 * java -jar warden-service.jar token-floor raise --to FLOOR [settings]
 * </pre>
 * {@code raise --above TOKEN} makes every token from now on larger than {@code TOKEN}: it writes {@code /probe} to learn
 * the cell's newest zxid Z, and raises the floor to {@code TOKEN - Z} (every later node has a czxid above Z). It never
 * lowers the floor: when the floor already puts new tokens above {@code TOKEN} it changes nothing, and {@code --to} a
 * floor below the current one is refused. A raise is one {@code multi}: the child {@code /token-floor/floor-{F}} (its
 * czxid is where it starts) and the new data of {@code /token-floor}.
 *
 * <p>Exit status: 0 done (or nothing to do), 1 ZooKeeper could not be reached or written, 2 bad arguments or a raise
 * that would lower the floor.
 */
public final class FloorCommand {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int BAD_ARGUMENTS = 2;
    private static final String USAGE = """
            usage: java -jar warden-service.jar token-floor show [settings]
                   java -jar warden-service.jar token-floor raise (--above TOKEN | --to FLOOR) [settings]
              --above TOKEN  raise the floor so that every token from now on is larger than TOKEN (take the largest
                             token any gateway reports in its refusal, or any resource has seen)
              --to FLOOR     raise the floor to FLOOR exactly (refused if that would lower it)
              settings       --zk host:port,... (required), --chroot, --config FILE, and the zk-tls-* / zk-sasl-* / zk-acl
                             settings of the gateways (java -jar warden-service.jar --help)
            """;

    private FloorCommand() {
    }

    /** Runs the command; returns the exit status. */
    public static int run(List<String> args, ConfigLoader loader, PrintStream out, PrintStream err) {
        if (args.isEmpty() || args.contains("--help") || !(args.get(0).equals("show") || args.get(0).equals("raise"))) {
            (args.contains("--help") ? out : err).print(USAGE);
            return args.contains("--help") ? OK : BAD_ARGUMENTS;
        }
        boolean raise = args.get(0).equals("raise");
        List<String> settings = new ArrayList<>();
        Long above = null;
        Long to = null;
        try {
            for (int i = 1; i < args.size(); i++) {
                String a = args.get(i);
                if (a.equals("--above") || a.equals("--to") || a.startsWith("--above=") || a.startsWith("--to=")) {
                    String value = a.contains("=") ? a.substring(a.indexOf('=') + 1)
                            : ++i < args.size() ? args.get(i) : null;
                    long v = parse(a.startsWith("--above") ? "--above" : "--to", value);
                    if (a.startsWith("--above")) {
                        above = v;
                    } else {
                        to = v;
                    }
                } else {
                    settings.add(a);
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("warden token-floor: " + e.getMessage());
            return BAD_ARGUMENTS;
        }
        if (raise && (above == null) == (to == null)) {
            err.println("warden token-floor raise: give exactly one of --above TOKEN and --to FLOOR");
            return BAD_ARGUMENTS;
        }
        if (!raise && (above != null || to != null)) {
            err.println("warden token-floor show: takes no --above or --to");
            return BAD_ARGUMENTS;
        }
        if (to != null && to > FloorHistory.MAX_FLOOR) {
            err.println("warden token-floor raise: --to must be at most " + FloorHistory.MAX_FLOOR
                    + " (tokens stay positive 64-bit numbers)");
            return BAD_ARGUMENTS;
        }
        WardenConfig config;
        try {
            config = loader.load(settings);
        } catch (ConfigException e) {
            err.println("warden token-floor: " + e.getMessage());
            return BAD_ARGUMENTS;
        }
        if (config.zkConnect() == null) {
            err.println("warden token-floor: --zk is required (the ensemble of the cell, host:port,...)");
            return BAD_ARGUMENTS;
        }
        try (ZkSecurity security = ZkSecurity.of(config);
             CuratorFramework client = CuratorFrameworkFactory.builder().connectString(config.zkConnect())
                     .zkClientConfig(security.clientConfig()).aclProvider(security.aclProvider())
                     .namespace(config.chroot().substring(1)).sessionTimeoutMs((int) config.zkSessionTimeout().toMillis())
                     .connectionTimeoutMs((int) config.zkConnectionTimeout().toMillis())
                     .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3)).defaultData(new byte[0]).build()) {
            client.start();
            long waitMs = Math.max(config.zkSessionTimeout().toMillis(), 5000);
            if (!client.blockUntilConnected((int) waitMs, TimeUnit.MILLISECONDS)) {
                err.println("warden token-floor: cannot reach ZooKeeper at " + config.zkConnect() + " within " + waitMs
                        + " ms");
                return FAILED;
            }
            return raise ? raise(client, config, above, to, out, err) : show(client, config, out);
        } catch (Exception e) {
            err.println("warden token-floor: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            return FAILED;
        }
    }

    private static long parse(String flag, String value) {
        if (value == null) {
            throw new IllegalArgumentException(flag + " needs a number");
        }
        try {
            long v = Long.parseLong(value.trim());
            if (v < 0) {
                throw new IllegalArgumentException(flag + " must not be negative, got " + value);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a whole number 0.." + Long.MAX_VALUE + ", got " + value);
        }
    }

    private static int show(CuratorFramework client, WardenConfig config, PrintStream out) throws Exception {
        client.sync().forPath("/");
        FloorHistory history = history(client);
        out.println("cell " + cellId(client) + " (" + config.zkConnect() + config.chroot() + "): token floor "
                + history.current() + (history.raises() == 0 ? " (never raised)" : ", " + history));
        return OK;
    }

    private static int raise(CuratorFramework client, WardenConfig config, Long above, Long to, PrintStream out,
                             PrintStream err) throws Exception {
        // A cell that lost everything (its servers all started empty) lost its layout too: made again, so that its
        // gateways serve it after the raise without a restart. On any other cell this finds everything in place.
        CellLayout.makeTop(client);
        CellLayout.makeShards(client);
        long cellZxid = client.setData().forPath(CellPaths.PROBE, new byte[0]).getMzxid();
        FloorHistory history = history(client);
        long current = history.current();
        String cell = cellId(client) + " (" + config.zkConnect() + config.chroot() + ")";
        long target;
        if (to != null) {
            if (to < current) {
                err.println("warden token-floor raise: the token floor of cell " + cell + " is " + current
                        + "; --to " + to + " would lower it, and a token floor is never lowered (tokens would repeat)");
                return BAD_ARGUMENTS;
            }
            target = to;
        } else {
            target = Math.max(0, above - cellZxid);
            if (target > FloorHistory.MAX_FLOOR) {
                err.println("warden token-floor raise: --above " + above + " needs a floor above "
                        + FloorHistory.MAX_FLOOR);
                return BAD_ARGUMENTS;
            }
        }
        if (target <= current) {
            // A gateway refusing the cell checks it again when the floor changes or it reconnects; here neither happens
            // (other clients' writes carried the cell past its mark), so touch the floor's node: its data change makes
            // every gateway read the floor again, and a refusing one check the cell.
            client.setData().forPath(CellPaths.TOKEN_FLOOR, client.getData().forPath(CellPaths.TOKEN_FLOOR));
            out.println("cell " + cell + ": the token floor is " + current + " at zxid " + cellZxid + (above != null
                    ? ", so every token from now on is above " + above : "") + "; nothing to raise. Gateways that refused "
                    + "the cell as rolled back check it again now, and serve it if it covers what they saw.");
            return OK;
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("floor", target);
        if (above != null) {
            data.put("above", above);
        }
        data.put("at_ms", System.currentTimeMillis());
        List<CuratorTransactionResult> results;
        try {
            results = client.transaction().forOperations(FloorRaise.ops(client.transactionOp(), target, data));
        } catch (KeeperException.NodeExistsException e) {
            out.println("cell " + cell + ": the token floor was raised to " + target + " meanwhile; nothing changed");
            return OK;
        }
        Stat stat = results.get(1).getResultStat();
        long zxid = stat.getMzxid();
        out.println("cell " + cell + ": raised the token floor from " + current + " to " + target + " at zxid " + zxid
                + "; every token from now on is at least " + Math.addExact(zxid + 1, target)
                + (above != null ? " (above " + above + ")" : "")
                + ". Gateways that refused the cell as rolled back serve it again once the floor covers what they saw.");
        return OK;
    }

    private static String cellId(CuratorFramework client) throws Exception {
        try {
            CellGuard.CellRecord record = Json.readOrNull(client.getData().forPath(CellPaths.CELL),
                    CellGuard.CellRecord.class);
            return record == null ? "(no id)" : record.cellId();
        } catch (KeeperException.NoNodeException e) {
            return "(no id yet)";
        }
    }

    /** Every raise, from the children of /token-floor and their czxids. */
    static FloorHistory history(CuratorFramework client) throws Exception {
        FloorHistory history = FloorHistory.NONE;
        List<String> children;
        try {
            children = client.getChildren().forPath(CellPaths.TOKEN_FLOOR);
        } catch (KeeperException.NoNodeException e) {
            return history;
        }
        for (String child : children) {
            long floor = CellPaths.floorOf(child);
            if (floor < 0 || floor > FloorHistory.MAX_FLOOR) {
                continue;
            }
            Stat stat = client.checkExists().forPath(CellPaths.TOKEN_FLOOR + "/" + child);
            if (stat != null) {
                history = history.with(stat.getCzxid(), floor);
            }
        }
        return history;
    }
}
