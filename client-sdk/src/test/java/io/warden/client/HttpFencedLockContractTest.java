package io.warden.client;

import io.warden.service.Gateway;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** {@link FencedLockContract} for {@link WardenClient}'s locks: every lock through its own client and session, one real gateway. */
class HttpFencedLockContractTest extends FencedLockContract {
    private final AtomicInteger clients = new AtomicInteger();
    private final Map<FencedLock, WardenClient> owners = Collections.synchronizedMap(new IdentityHashMap<>());
    private Cell cell;
    private Gateway gateway;

    @BeforeEach
    void startCell() throws Exception {
        cell = new Cell();
        gateway = cell.gateway();
    }

    @AfterEach
    void stopCell() {
        cell.close();
    }

    private WardenClient newClient() {
        return cell.client("contract-" + clients.incrementAndGet(), Cell.url(gateway));
    }

    @Override
    protected FencedLock makeLock(String name) {
        WardenClient client = newClient();
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
    protected void endGrantElsewhere(FencedLock lock, Hold hold) {
        long token = hold.token();
        cell.release(gateway, owners.get(lock).sessionId(), hold.name(), token);
    }

    @Override
    protected int queueLength(String name) {
        return cell.fx.queueSize(name);
    }
}
