package io.warden.client.direct;

import io.warden.client.FencedLock;
import io.warden.client.FencedLockContract;
import io.warden.client.FencedReadWriteLock;
import io.warden.client.Hold;
import io.warden.service.support.WardenFixture;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** {@link FencedLockContract} for {@link DirectLocks}: every lock through its own Curator client, on a TestingServer. */
class DirectFencedLockContractTest extends FencedLockContract {
    private final List<DirectLocks> locks = new ArrayList<>();
    private final Map<FencedLock, DirectLocks> owners = Collections.synchronizedMap(new IdentityHashMap<>());
    private final List<CuratorFramework> curators = new ArrayList<>();
    private WardenFixture fx;

    @BeforeEach
    void startZooKeeper() throws Exception {
        fx = new WardenFixture();
    }

    @AfterEach
    void stopZooKeeper() throws Exception {
        locks.forEach(DirectLocks::close);
        curators.forEach(CuratorFramework::close);
        fx.close();
    }

    private DirectLocks newClient() {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(fx.server.getConnectString())
                .sessionTimeoutMs(10_000).connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(50, 100)).build();
        curators.add(c);
        c.start();
        try {
            if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new AssertionError("could not connect to the test ZooKeeper");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        DirectLocks l = DirectLocks.of(c);
        locks.add(l);
        return l;
    }

    @Override
    protected FencedLock makeLock(String name) {
        DirectLocks client = newClient();
        FencedLock lock = client.lock(name);
        owners.put(lock, client);
        return lock;
    }

    @Override
    protected FencedReadWriteLock makeReadWriteLock(String name) {
        return newClient().readWriteLock(name);
    }

    @Override
    protected FencedLock sameClient(FencedLock lock, String name) {
        return owners.get(lock).lock(name);
    }

    @Override
    protected void endGrantElsewhere(FencedLock lock, Hold hold) throws Exception {
        long token = hold.token();
        for (String node : fx.queue(hold.name())) {
            String path = WardenFixture.lockPath(hold.name()) + "/" + node;
            Stat stat = fx.curator.checkExists().forPath(path);
            if (stat != null && stat.getCzxid() == token) {
                fx.curator.delete().forPath(path);
                return;
            }
        }
        throw new AssertionError("no node with token " + token + " on " + hold.name());
    }

    @Override
    protected int queueLength(String name) {
        return fx.queueSize(name);
    }
}
