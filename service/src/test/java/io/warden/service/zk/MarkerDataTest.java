package io.warden.service.zk;

import io.warden.service.Gateway;
import io.warden.service.api.AcquireResult;
import io.warden.service.api.LockName;
import io.warden.service.api.Warden;
import io.warden.service.support.WardenFixture;
import org.apache.jute.BinaryInputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs.OpCode;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog.TxnIterator;
import org.apache.zookeeper.txn.CreateContainerTxn;
import org.apache.zookeeper.txn.CreateTxn;
import org.apache.zookeeper.txn.MultiTxn;
import org.apache.zookeeper.txn.Txn;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.warden.service.support.WardenFixture.await;
import static io.warden.service.support.WardenFixture.exclusive;
import static io.warden.service.support.WardenFixture.join;
import static io.warden.service.support.WardenFixture.session;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nodes whose name is all they say carry no data: the end markers ({@code ~uuid_seq}) under a session and the
 * {@code /expired} markers (Curator's default data for a create without data would be the gateway's IP address).
 * The data of every create is read from the server's own transaction log, so a marker deleted a moment after its
 * creation is seen too.
 */
class MarkerDataTest {
    @AutoClose
    private final WardenFixture fx = WardenFixture.create();

    @Test
    void endMarkersAndExpiryMarkers_areEmpty() throws Exception {
        Gateway gw = fx.gateway();
        Warden w = gw.warden();
        String released = session(w, "released", 60_000);
        AcquireResult held = join(w.acquire(exclusive(released, "marks/one", 0)));
        assertThat(w.release(released, LockName.parse("marks/one"), held.token()).join()).isTrue();

        String expiring = session(w, "expiring", 2_000);
        join(w.acquire(exclusive(expiring, "marks/two", 0)));
        fx.clock.advance(Duration.ofMillis(2_000));
        await("expired", () -> gone(CellPaths.session(expiring)));

        Map<String, byte[]> created = createdInTheLog();
        String endMarkerPrefix = "/warden" + CellPaths.session(released) + "/~";
        assertThat(created).hasKeySatisfying(new org.assertj.core.api.Condition<>(
                p -> p.startsWith(endMarkerPrefix), "an end marker of the released request"));
        assertThat(created).containsKey("/warden" + CellPaths.expiredMarker(expiring));
        created.forEach((path, data) -> {
            if (path.startsWith(endMarkerPrefix) || path.startsWith("/warden" + CellPaths.EXPIRED + "/")) {
                assertThat(data).as("data of %s", path).isEmpty();
            }
        });
    }

    private boolean gone(String path) {
        try {
            return fx.curator.checkExists().forPath(path) == null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Every node created so far, with the data it was created with, from the server's transaction log. */
    private Map<String, byte[]> createdInTheLog() throws IOException {
        Map<String, byte[]> created = new LinkedHashMap<>();
        File logDir = new File(fx.server.getTempDirectory(), "version-2");
        try (FileTxnLog log = new FileTxnLog(logDir); TxnIterator it = log.read(1)) {
            while (it.getHeader() != null) {
                Record txn = it.getTxn();
                if (txn instanceof MultiTxn multi) {
                    for (Txn part : multi.getTxns()) {
                        collect(part.getType(), part.getData(), created);
                    }
                } else if (txn instanceof CreateTxn create) {
                    created.put(create.getPath(), create.getData());
                } else if (txn instanceof CreateContainerTxn create) {
                    created.put(create.getPath(), create.getData());
                }
                if (!it.next()) {
                    break;
                }
            }
        }
        return created;
    }

    private static void collect(int type, byte[] bytes, Map<String, byte[]> created) throws IOException {
        BinaryInputArchive in = BinaryInputArchive.getArchive(new DataInputStream(new ByteArrayInputStream(bytes)));
        switch (type) {
            case OpCode.create, OpCode.create2 -> {
                CreateTxn create = new CreateTxn();
                create.deserialize(in, "txn");
                created.put(create.getPath(), create.getData());
            }
            case OpCode.createContainer -> {
                CreateContainerTxn create = new CreateContainerTxn();
                create.deserialize(in, "txn");
                created.put(create.getPath(), create.getData());
            }
            default -> { }
        }
    }
}
