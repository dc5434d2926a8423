package io.warden.it.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Free TCP ports on the loopback address (127.0.0.1 only: the tests never bind anything else).
 *
 * <p>A port found free may be taken by someone else before the child binds it; the ports handed out
 * by one JVM are remembered so that two calls never return the same port.
 */
public final class LoopbackPorts {
    public static final String HOST = "127.0.0.1";

    // Guarded by LoopbackPorts.class.
    private static final Set<Integer> GIVEN = new HashSet<>();

    private LoopbackPorts() {
    }

    public static synchronized int free() {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
                int port = socket.getLocalPort();
                if (GIVEN.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("no free loopback port", e);
            }
        }
        throw new IllegalStateException("no free loopback port after 100 attempts");
    }

    /**
     * {@code count} blocks of {@code size} consecutive free ports (for scripts that number ports from a base, like
     * zk-config's dev-ensemble): the bases, each block's ports all bindable now and none handed out before.
     */
    public static synchronized int[] freeBlocks(int count, int size) {
        int[] bases = new int[count];
        java.util.Random random = new java.util.Random();
        int found = 0;
        for (int attempt = 0; attempt < 10_000 && found < count; attempt++) {
            int base = 20_000 + random.nextInt(30_000);
            boolean ok = true;
            for (int p = base; p < base + size && ok; p++) {
                ok = !GIVEN.contains(p) && bindable(p);
            }
            if (ok) {
                for (int p = base; p < base + size; p++) {
                    GIVEN.add(p);
                }
                bases[found++] = base;
            }
        }
        if (found < count) {
            throw new IllegalStateException("no " + count + " blocks of " + size + " free loopback ports");
        }
        return bases;
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
