package io.warden.sample;

import io.warden.spring.integration.WardenLock;
import io.warden.spring.integration.WardenLockRegistry;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The job guarded by Spring Integration's {@code LockRegistry}: every instance runs it on its schedule, but a run goes
 * ahead only in the instance that gets the registry's lock {@code digest} (the Warden lock {@code sample/digest}) at
 * once ({@code tryLock()}); the others skip that turn. The run writes the digest with the lock's fencing token, so the
 * table takes it only if no later holder has written.
 */
@Component
public class DigestJob {
    /** The job's lock key in the registry, and its row in the report table. */
    public static final String NAME = "digest";

    private static final Logger log = LoggerFactory.getLogger(DigestJob.class);

    private final WardenLockRegistry locks;
    private final FencedReportStore store;
    private final String instance;
    private final long workMs;

    public DigestJob(WardenLockRegistry locks, FencedReportStore store,
                     @Value("${warden.client-id:sample}") String instance,
                     @Value("${sample.job.work-ms:200}") long workMs) {
        this.locks = locks;
        this.store = store;
        this.instance = instance;
        this.workMs = workMs;
    }

    @Scheduled(fixedDelayString = "${sample.job.every-ms:1000}")
    public void run() throws InterruptedException {
        WardenLock lock = locks.obtain(NAME);
        if (!lock.tryLock()) {
            log.debug("{}: another instance runs the digest now; skipping this turn", instance);
            return;
        }
        try {
            long token = lock.token();
            long started = System.nanoTime();
            TimeUnit.MILLISECONDS.sleep(workMs);                  // the work
            boolean accepted = store.write(NAME, instance, token, "digest by " + instance + " under token " + token);
            store.log(new FencedReportStore.Run(NAME, instance, token, started, System.nanoTime(), accepted));
            if (accepted) {
                log.info("{}: wrote the digest under token {}", instance, token);
            } else {
                log.warn("{}: the digest refused token {}: a later holder has written", instance, token);
            }
        } finally {
            lock.unlock();
        }
    }
}
