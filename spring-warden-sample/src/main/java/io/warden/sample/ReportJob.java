package io.warden.sample;

import io.warden.shedlock.WardenShedLock;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The job guarded by ShedLock: every instance runs it on its schedule, but ShedLock calls the method only in the
 * instance whose {@code WardenLockProvider} gets the lock {@code report} (the Warden lock {@code sample/report}) at
 * once; the others skip that turn. The run reads its fencing token with {@link WardenShedLock#currentToken()} and
 * writes the report with it, so the table takes the write only if no later holder has written.
 */
@Component
public class ReportJob {
    /** The job's ShedLock name, and its row in the report table. */
    public static final String NAME = "report";

    private static final Logger log = LoggerFactory.getLogger(ReportJob.class);

    private final FencedReportStore store;
    private final String instance;
    private final long workMs;

    public ReportJob(FencedReportStore store,
                     @Value("${warden.client-id:sample}") String instance,
                     @Value("${sample.job.work-ms:200}") long workMs) {
        this.store = store;
        this.instance = instance;
        this.workMs = workMs;
    }

    // lockAtMostFor is @EnableSchedulerLock's default (sample.lock-ttl): the hold ends then even if the run has not.
    @Scheduled(fixedDelayString = "${sample.job.every-ms:1000}")
    @SchedulerLock(name = NAME)
    public void run() throws InterruptedException {
        long token = WardenShedLock.currentToken();     // this run's token: larger than every earlier run's
        long started = System.nanoTime();
        TimeUnit.MILLISECONDS.sleep(workMs);            // the work
        boolean accepted = store.write(NAME, instance, token, "report by " + instance + " under token " + token);
        store.log(new FencedReportStore.Run(NAME, instance, token, started, System.nanoTime(), accepted));
        if (accepted) {
            log.info("{}: wrote the report under token {}", instance, token);
        } else {
            log.warn("{}: the report refused token {}: a later holder has written", instance, token);
        }
    }
}
