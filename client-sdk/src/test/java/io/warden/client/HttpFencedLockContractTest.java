package io.warden.client;

import io.warden.service.Gateway;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** {@link FencedLockContract} for {@link WardenClient}'s locks: every lock through its own client and session, one real gateway. */
class HttpFencedLockContractTest extends FencedLockContract {
    private final AtomicInteger clients = new AtomicInteger();
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
        return newClient().lock(name);
    }

    @Override
    protected FencedReadWriteLock makeReadWriteLock(String name) {
        return newClient().readWriteLock(name);
    }

    @Override
    protected int queueLength(String name) {
        return cell.fx.queueSize(name);
    }
}
