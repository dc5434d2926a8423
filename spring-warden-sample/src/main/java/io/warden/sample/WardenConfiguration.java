package io.warden.sample;

import io.warden.client.WardenClient;
import io.warden.shedlock.WardenLockProvider;
import io.warden.spring.integration.WardenLockRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The beans of one instance: ShedLock's lock provider and Spring Integration's lock registry, both on Warden, with
 * their locks in the Warden namespace {@code sample.lock-namespace} ({@code sample}); and the database the jobs write
 * to. Every instance that must exclude the others uses the same namespace.
 */
@Configuration(proxyBeanMethods = false)
public class WardenConfiguration {

    /**
     * ShedLock's locks ({@code @SchedulerLock(name = "report")} is the Warden lock {@code sample/report}). The provider
     * owns its client: it makes one here and a new one when a session was lost (a pause or partition longer than its
     * TTL); {@code close()} releases what it still holds and closes the client.
     */
    @Bean(destroyMethod = "close")
    LockProvider lockProvider(@Value("${warden.endpoints:http://localhost:7070}") String[] endpoints,
                              @Value("${warden.client-id:sample}") String clientId,
                              @Value("${warden.session-ttl:10s}") Duration sessionTtl,
                              @Value("${sample.lock-namespace:sample}") String namespace) {
        return new WardenLockProvider(() -> WardenClient.builder().endpoints(endpoints).clientId(clientId)
                .sessionTtl(sessionTtl).build(), namespace);
    }

    /** The lock registry's client (one session). Closed with the application context, which releases its locks. */
    @Bean(destroyMethod = "close")
    WardenClient wardenClient(@Value("${warden.endpoints:http://localhost:7070}") String[] endpoints,
                              @Value("${warden.client-id:sample}") String clientId,
                              @Value("${warden.session-ttl:10s}") Duration sessionTtl) {
        return WardenClient.builder().endpoints(endpoints).clientId(clientId).sessionTtl(sessionTtl).build();
    }

    /** Locks named {@code sample/{key}}; a grant lasts {@code sample.lock-ttl} (30 s) unless renewed. */
    @Bean(destroyMethod = "close")
    WardenLockRegistry lockRegistry(WardenClient warden, @Value("${sample.lock-namespace:sample}") String namespace,
                                    @Value("${sample.lock-ttl:30s}") Duration lockTtl) {
        return new WardenLockRegistry(warden, namespace, lockTtl);
    }

    /** One database for all instances: by default an H2 file that several processes may open at once. */
    @Bean
    DataSource dataSource(@Value("${sample.jdbc-url:jdbc:h2:file:./target/sample-db;AUTO_SERVER=TRUE}") String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        return ds;
    }

    @Bean
    FencedReportStore reportStore(DataSource dataSource) {
        FencedReportStore store = new FencedReportStore(dataSource);
        store.createTables(ReportJob.NAME, DigestJob.NAME);
        return store;
    }
}
