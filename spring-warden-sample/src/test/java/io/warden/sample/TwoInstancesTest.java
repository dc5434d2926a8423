package io.warden.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.sample.FencedReportStore.Run;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the sample application (two Spring contexts, each with its own Warden sessions) against one real
 * gateway and one database. Both jobs, {@link ReportJob} ({@code @SchedulerLock}) and {@link DigestJob}
 * ({@code LockRegistry}), are checked from the runs the instances logged: the instances take turns, no two runs
 * overlap, every run has a larger token than the one before (so each grant was one run, in one instance), the table
 * took every write, and it refuses a stale token. The second test shows that the check sees overlapping runs when the
 * instances do not share their locks.
 */
class TwoInstancesTest {
    private static final List<String> JOBS = List.of(ReportJob.NAME, DigestJob.NAME);

    private static WardenFixture fx;
    private static Gateway gateway;

    @BeforeAll
    static void startGateway() throws Exception {
        fx = new WardenFixture();
        gateway = Gateway.start(fx.config().toBuilder().httpHost("127.0.0.1").build());
    }

    @AfterAll
    static void stopGateway() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    @Test
    void twoInstances_takeTurnsAtEachJob_neverTogether_andWriteWithGrowingTokens() {
        String db = database();
        FencedReportStore store = new FencedReportStore(dataSource(db));
        try (ConfigurableApplicationContext a = instance("instance-a", "sample", db);
             ConfigurableApplicationContext b = instance("instance-b", "sample", db)) {
            WardenFixture.await("both instances have run each job, six runs of each", Duration.ofSeconds(30),
                    () -> JOBS.stream().allMatch(job -> instances(store.runs(job)) == 2 && store.runs(job).size() >= 6));
        }
        for (String job : JOBS) {
            List<Run> runs = store.runs(job);
            assertThat(notOneAtATime(runs)).as("%s: %s", job, runs).isEmpty();
            assertThat(store.fence(job)).as("%s: the table holds the last run's token", job)
                    .isEqualTo(runs.get(runs.size() - 1).token());

            // a write from a holder whose lock has passed on (a lower token) changes nothing
            assertThat(store.write(job, "stale", runs.get(0).token(), "late")).as("%s: a stale write", job).isFalse();
            assertThat(store.fence(job)).isEqualTo(runs.get(runs.size() - 1).token());
        }
    }

    /**
     * Instances whose locks are in different Warden namespaces do not exclude each other (each takes a lock the other
     * never asks for): as if the jobs had no lock. Their runs overlap, and the check above says so.
     */
    @Test
    void instancesThatDoNotShareTheirLocks_runTogether_andTheCheckSeesIt() {
        String db = database();
        FencedReportStore store = new FencedReportStore(dataSource(db));
        try (ConfigurableApplicationContext a = instance("instance-a", "sample-a", db);
             ConfigurableApplicationContext b = instance("instance-b", "sample-b", db)) {
            for (String job : JOBS) {
                WardenFixture.await(job + ": the check has seen two runs at once", Duration.ofSeconds(30),
                        () -> notOneAtATime(store.runs(job)).stream().anyMatch(broken -> broken.endsWith("overlap")));
            }
        }
    }

    /**
     * An instance stopped while its jobs run lets each run end, and write, before it releases the run's lock: were the
     * lock released first, another instance could start the job beside the run still under way. Spring stops the
     * scheduler before it closes the other beans, and waits for running jobs up to
     * {@code spring.lifecycle.timeout-per-shutdown-phase} (30 s); cut that short and the runs are interrupted.
     */
    @Test
    void stoppingAnInstance_whileItsJobsRun_letsTheRunsEnd_beforeTheirLocksAreReleased() {
        String db = database();
        FencedReportStore store = new FencedReportStore(dataSource(db));
        try (ConfigurableApplicationContext a = instance("instance-a", "sample-stop", db, "sample.job.work-ms=1500")) {
            WardenFixture.await("the first run of each job holds its lock", Duration.ofSeconds(30),
                    () -> JOBS.stream().allMatch(job -> fx.queueSize("sample-stop/" + job) == 1
                            && store.runs(job).isEmpty()));
        }
        for (String job : JOBS) {
            assertThat(store.runs(job)).as("%s: the run under way at the stop ended and wrote", job)
                    .singleElement().matches(Run::accepted);
            WardenFixture.await(job + ": its lock is released", Duration.ofSeconds(10),
                    () -> fx.queueSize("sample-stop/" + job) == 0);
        }
    }

    /**
     * Everything in {@code runs} (in the order they started) that breaks "one instance at a time, with growing tokens,
     * every write taken"; empty when nothing does.
     */
    static List<String> notOneAtATime(List<Run> runs) {
        List<String> broken = new ArrayList<>();
        for (int i = 1; i < runs.size(); i++) {
            Run before = runs.get(i - 1);
            Run run = runs.get(i);
            if (run.startedNanos() < before.endedNanos()) {
                broken.add("run " + i + " (" + run.instance() + ", token " + run.token() + ") started "
                        + (before.endedNanos() - run.startedNanos()) / 1_000 + " µs before run " + (i - 1) + " ("
                        + before.instance() + ", token " + before.token() + ") ended: the runs overlap");
            }
            if (run.token() <= before.token()) {
                broken.add("run " + i + " (" + run.instance() + ") has token " + run.token()
                        + ", not larger than run " + (i - 1) + "'s " + before.token());
            }
        }
        runs.stream().filter(r -> !r.accepted())
                .forEach(r -> broken.add("the table refused the write of " + r.instance() + " with token " + r.token()));
        return broken;
    }

    private static long instances(List<Run> runs) {
        return runs.stream().map(Run::instance).distinct().count();
    }

    private static ConfigurableApplicationContext instance(String id, String namespace, String db, String... more) {
        return new SpringApplicationBuilder(SampleApplication.class).properties(
                "warden.endpoints=http://127.0.0.1:" + gateway.httpPort(),
                "warden.client-id=" + id,
                "sample.lock-namespace=" + namespace,
                "sample.jdbc-url=" + db,
                "sample.job.every-ms=50",
                "sample.job.work-ms=100",
                "spring.main.banner-mode=off").properties(more).run();
    }

    private static String database() {
        return "jdbc:h2:mem:sample-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
    }

    private static JdbcDataSource dataSource(String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        return ds;
    }
}
