package io.warden.sample;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A Spring Boot application with two scheduled jobs that every instance runs on its own schedule and that only one
 * instance at a time gets to run, each writing with its lock's fencing token to a table that refuses tokens lower than
 * the last one it took ({@link FencedReportStore}): {@link ReportJob}, guarded by ShedLock's {@code @SchedulerLock} on
 * a {@code WardenLockProvider}, and {@link DigestJob}, guarded by a {@code WardenLockRegistry}. Start two instances
 * against the same gateways and database and watch them take turns (the module's README shows how).
 *
 * <p>{@code @EnableSchedulerLock}: a {@code @SchedulerLock} hold ends after {@code sample.lock-ttl} (30 s) unless the
 * annotation says otherwise, even if the run has not ended; Warden ends it sooner if the instance dies (its session
 * expires).
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "${sample.lock-ttl:30s}")
public class SampleApplication {
    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
