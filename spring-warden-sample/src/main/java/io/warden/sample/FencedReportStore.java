package io.warden.sample;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The resource the jobs protect: one report row per job that keeps the fencing token of its last write ({@code fence}),
 * and a log of every run. A write is a conditional update, {@code ... WHERE job = :job AND fence < :token}, so a holder
 * whose lock has passed on (paused past its TTL, then resumed) cannot overwrite a newer holder's report: its token is
 * lower, and the update changes nothing.
 */
public class FencedReportStore {
    /**
     * One run of a job: which job, who ran it, under which token, when (System.nanoTime), and whether the write was
     * taken.
     */
    public record Run(String job, String instance, long token, long startedNanos, long endedNanos, boolean accepted) {
    }

    private final DataSource dataSource;

    public FencedReportStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Creates the tables and a report row (fence 0) for each of {@code jobs}, keeping rows another instance made. */
    void createTables(String... jobs) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS report (job VARCHAR(64) PRIMARY KEY, fence BIGINT NOT NULL,"
                    + " writer VARCHAR(64), body VARCHAR(256))");
            st.execute("CREATE TABLE IF NOT EXISTS runs (job VARCHAR(64) NOT NULL, instance VARCHAR(64) NOT NULL,"
                    + " token BIGINT NOT NULL, started BIGINT NOT NULL, ended BIGINT NOT NULL, accepted BOOLEAN NOT NULL)");
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the sample's tables", e);
        }
        for (String job : jobs) {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement st = c.prepareStatement("INSERT INTO report (job, fence) VALUES (?, 0)")) {
                st.setString(1, job);
                st.executeUpdate();
            } catch (SQLException e) {
                if (!"23505".equals(e.getSQLState())) { // the row is there already (another instance made it): keep its fence
                    throw new IllegalStateException("could not create the report row of " + job, e);
                }
            }
        }
    }

    /**
     * Writes {@code job}'s report with {@code token}; false (nothing changed) when a write with a token as large was
     * taken.
     */
    public boolean write(String job, String instance, long token, String body) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement(
                     "UPDATE report SET fence = ?, writer = ?, body = ? WHERE job = ? AND fence < ?")) {
            st.setLong(1, token);
            st.setString(2, instance);
            st.setString(3, body);
            st.setString(4, job);
            st.setLong(5, token);
            return st.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IllegalStateException("could not write the report of " + job + " with token " + token, e);
        }
    }

    void log(Run run) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)")) {
            st.setString(1, run.job());
            st.setString(2, run.instance());
            st.setLong(3, run.token());
            st.setLong(4, run.startedNanos());
            st.setLong(5, run.endedNanos());
            st.setBoolean(6, run.accepted());
            st.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("could not log a run of " + run.job(), e);
        }
    }

    /** Every run of {@code job} logged, in the order they started. */
    public List<Run> runs(String job) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT job, instance, token, started, ended, accepted FROM runs"
                     + " WHERE job = ? ORDER BY started")) {
            st.setString(1, job);
            List<Run> runs = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    runs.add(new Run(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                            rs.getBoolean(6)));
                }
            }
            return runs;
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the runs of " + job, e);
        }
    }

    /** The token of the last write {@code job}'s report took (0 before the first). */
    public long fence(String job) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement st = c.prepareStatement("SELECT fence FROM report WHERE job = ?")) {
            st.setString(1, job);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no report row for job " + job);
                }
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the report of " + job, e);
        }
    }
}
