package io.warden.console;

import static io.warden.console.Fixtures.ALICE;
import static io.warden.console.Fixtures.BOB;
import static io.warden.console.Fixtures.CAROL;
import static io.warden.console.Fixtures.HOSTILE;
import static io.warden.console.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import io.warden.console.model.AuditEntry;
import io.warden.console.model.CellSnapshot;
import io.warden.console.model.LockState;
import io.warden.console.model.Mode;
import io.warden.console.model.QueuedRequest;
import io.warden.console.view.AsOf;
import io.warden.console.view.AuditView;
import io.warden.console.view.CellsView;
import io.warden.console.view.ConfirmView;
import io.warden.console.view.LockListing;
import io.warden.console.view.LockView;
import io.warden.console.view.LoginView;
import io.warden.console.view.NamespaceView;
import io.warden.console.view.Overview;
import io.warden.console.view.OverviewView;
import io.warden.console.view.Page;
import io.warden.console.view.SessionIndex;
import io.warden.console.view.SessionView;
import io.warden.console.view.SessionsView;
import io.warden.console.view.Viewer;
import io.warden.console.view.WaitForGraph;
import io.warden.console.view.WaitsView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The templates rendered against hand-built views: hooks, order, empty states, and escaping of hostile data. */
class TemplatesTest {
    private static final String ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;";
    private final Templates templates = new Templates();
    private final Viewer viewer = Viewer.anonymous(true);
    private final Viewer admin = new Viewer("jane", true, "csrf-123");

    private static Page page(Viewer viewer, String subject) {
        return new Page("Title", "", viewer, "", 2000, "/console/x?fragment=1", null, null, subject);
    }

    private String lockPage(Viewer v) {
        LockView view = LockView.of("payments/invoice-42", Optional.of(Fixtures.invoice42Detail()), NOW);
        return templates.render("lock", page(v, "payments/invoice-42"), view);
    }

    /** The values of {@code attribute} on the rows of the table with {@code id}, in document order. */
    private static List<String> rowAttributes(String html, String tableId, String attribute) {
        int start = html.indexOf("id=\"" + tableId + "\"");
        assertThat(start).as("table #" + tableId).isNotNegative();
        String table = html.substring(start, html.indexOf("</table>", start));
        List<String> values = new ArrayList<>();
        Matcher m = Pattern.compile("<tr [^>]*" + attribute + "=\"([^\"]*)\"").matcher(table);
        while (m.find()) {
            values.add(m.group(1));
        }
        return values;
    }

    @Test
    void lockPage_listsHolders_thenWaitersInQueueOrder_withTokens() {
        String html = lockPage(viewer);

        assertThat(rowAttributes(html, "holders", "data-session")).containsExactly(ALICE);
        assertThat(rowAttributes(html, "holders", "data-token")).containsExactly("16");
        assertThat(rowAttributes(html, "waiters", "data-session")).containsExactly(BOB, CAROL);
        assertThat(rowAttributes(html, "waiters", "data-token")).containsExactly("18", "21");
        assertThat(html.indexOf("id=\"holders\"")).isLessThan(html.indexOf("id=\"waiters\""));
        assertThat(html).contains("id=\"events\"").contains("GRANTED").contains("revision <span class=\"mono\">4242</span>");
        assertThat(html).contains("hx-get=\"/console/x?fragment=1\"").contains("hx-trigger=\"every 2000ms\"");
        assertThat(html).contains("id=\"stale-banner\"").contains("<time datetime=\"");
    }

    @Test
    void lockPage_waitersAreSortedByPosition_whateverTheBackendOrder() {
        var lock = Fixtures.invoice42();
        var shuffled = new io.warden.console.model.LockState(lock.name(),
                List.of(lock.queue().get(2), lock.queue().get(0), lock.queue().get(1)));
        var detail = new io.warden.console.model.LockDetail(shuffled, 1, List.of());
        String html = templates.render("lock_live", page(viewer, lock.name()), LockView.of(lock.name(), Optional.of(detail), NOW));

        assertThat(rowAttributes(html, "waiters", "data-session")).containsExactly(BOB, CAROL);
    }

    @Test
    void forceRelease_isOfferedToAdminsOnly() {
        assertThat(lockPage(viewer)).doesNotContain("force-release");
        String html = lockPage(admin);
        assertThat(html).contains("class=\"force-release")
                .contains("href=\"/console/actions/force-release?name=payments%2Finvoice-42&amp;token=16\"");
        assertThat(html).contains("name=\"csrf\" value=\"csrf-123\""); // the logout form
    }

    @Test
    void freeLock_saysItIsFree_andKeepsBothTables() {
        String html = templates.render("lock", page(viewer, "payments/x"), LockView.of("payments/x", Optional.empty(), NOW));

        assertThat(html).contains("payments/x</code> has no holders or waiters — it is free");
        assertThat(html).contains("id=\"holders\"").contains("no holders").contains("id=\"waiters\"").contains("no waiters");
        assertThat(rowAttributes(html, "waiters", "data-session")).isEmpty();
    }

    @Test
    void hostileClientIds_areEscapedEverywhere() {
        var cell = Fixtures.cell();
        List<String> pages = new ArrayList<>();
        pages.add(templates.render("overview", page(viewer, ""),
                new OverviewView(Overview.of(cell, NOW), null, Fixtures.health(), null, NOW)));
        String namespace = templates.render("namespace", page(viewer, "orders"), new NamespaceView(
                LockListing.page(cell, "orders", "", "", 50, NOW), List.of("orders")));
        assertThat(namespace).doesNotContain(HOSTILE).contains("tr data-lock=\"orders/o-1\"");
        var index = SessionIndex.of(cell);
        pages.add(templates.render("sessions", page(viewer, ""), new SessionsView("", "", index.filter("", ""), 7, 7,
                200, List.of("orders"), AsOf.of(cell, NOW))));
        pages.add(templates.render("session", page(viewer, Fixtures.EVE),
                new SessionView(Fixtures.EVE, index.get(Fixtures.EVE).orElseThrow(), AsOf.of(cell, NOW))));
        pages.add(templates.render("waits", page(admin, ""), new WaitsView(WaitForGraph.of(Fixtures.waitFor()), AsOf.of(cell, NOW))));
        var lock = cell.locks().stream().filter(l -> l.name().equals("orders/o-1")).findFirst().orElseThrow();
        pages.add(templates.render("lock", page(admin, lock.name()), LockView.of(lock.name(),
                Optional.of(new io.warden.console.model.LockDetail(lock, 1, List.of())), NOW)));
        pages.add(templates.render("audit", page(viewer, ""), new AuditView(List.of(new AuditEntry(NOW, HOSTILE,
                "FORCE_RELEASE", "orders/o-1#12", HOSTILE, HOSTILE, HOSTILE, HOSTILE)), 100, NOW)));
        pages.add(templates.render("error", page(viewer, ""), new io.warden.console.view.ErrorView(400, "Bad", HOSTILE, null)));

        for (String html : pages) {
            assertThat(html).doesNotContain(HOSTILE).contains(ESCAPED);
        }
    }

    @Test
    void hostileSearchTextAndFlash_areEscaped() {
        Page p = new Page("\"><script>x()</script>", "", viewer, "\"><script>y()</script>", 2000, null,
                "<img src=x onerror=alert(1)>", null, "");
        String html = templates.render("error", p, new io.warden.console.view.ErrorView(404, "Not found", "m", null));

        assertThat(html).doesNotContain("<script>x()").doesNotContain("<script>y()").doesNotContain("<img src=x");
        assertThat(html).contains("id=\"flash\"").contains("&lt;img src=x onerror=alert(1)&gt;");
    }

    @Test
    void overview_hasLockRows_health_andEmptyStates() {
        var cell = Fixtures.cell();
        String html = templates.render("overview", page(viewer, ""),
                new OverviewView(Overview.of(cell, NOW), null, Fixtures.health(), null, NOW));
        assertThat(html).contains("tr data-lock=\"payments/invoice-42\"").contains("tr data-lock=\"orders/o-1\"");
        assertThat(html).contains("leader zk2:2181").contains("2/3 servers answer").contains("Connection refused");
        assertThat(html).contains("0x100000e7a"); // the largest zxid, in hex

        var empty = new io.warden.console.model.CellSnapshot(NOW, 1, List.of(), List.of());
        String emptyHtml = templates.render("overview_live", page(viewer, ""),
                new OverviewView(Overview.of(empty, NOW), null, null, "ZooKeeper: connection loss", NOW));
        assertThat(emptyHtml).contains("No locks are held or waited for").contains("Nobody is waiting")
                .contains("Cannot read health: ZooKeeper: connection loss");
    }

    @Test
    void namespace_emptyStates() {
        var cell = Fixtures.cell();
        String none = templates.render("namespace_live", page(viewer, "billing"),
                new NamespaceView(LockListing.page(cell, "billing", "", "", 50, NOW), List.of("orders", "payments")));
        assertThat(none).contains("No locks in this namespace").contains("href=\"/console/ns/payments\"");

        String noMatch = templates.render("namespace_live", page(viewer, "payments"),
                new NamespaceView(LockListing.page(cell, "payments", "payments/x", "", 50, NOW), List.of("payments")));
        assertThat(noMatch).contains("payments/x</a> has no holders or waiters — it is free");
    }

    @Test
    void waits_showDeadlocksProminently() {
        String html = templates.render("waits_live", page(viewer, ""),
                new WaitsView(WaitForGraph.of(Fixtures.waitFor()), AsOf.of(Fixtures.cell(), NOW)));
        int deadlocks = html.indexOf("id=\"deadlocks\"");
        assertThat(deadlocks).isNotNegative();
        assertThat(html.indexOf("DEADLOCK", deadlocks)).isGreaterThan(deadlocks);
        assertThat(html).contains("data-members=\"" + ALICE + " " + BOB + "\"").contains("ends in a DEADLOCK")
                .contains("a member said FAIL").contains("<strong class=\"bad\">FAIL</strong>").contains("queued ahead");

        String calm = templates.render("waits_live", page(viewer, ""),
                new WaitsView(WaitForGraph.of(new io.warden.console.model.WaitFor(NOW, 1, false, List.of(), 0, List.of())),
                        AsOf.of(Fixtures.cell(), NOW)));
        assertThat(calm).contains("id=\"deadlocks\"").contains("No deadlocks").doesNotContain("<strong>DEADLOCK");
    }

    @Test
    void confirmPage_hasReason_csrf_andConfirm() {
        QueuedRequest hold = Fixtures.invoice42().holders().get(0);
        String html = templates.render("confirm", page(admin, "").withBanner(null),
                new ConfirmView("force-release", "payments/invoice-42", 16, hold, Fixtures.invoice42().waiters(),
                        null, null, "", null, NOW));
        assertThat(html).contains("<textarea id=\"reason\" name=\"reason\" required")
                .contains("maxlength=\"500\"")
                .contains("<input type=\"hidden\" name=\"csrf\" value=\"csrf-123\">")
                .contains("<input type=\"hidden\" name=\"token\" value=\"16\">")
                .contains("id=\"confirm\"")
                .contains("first in line: bob");

        String gone = templates.render("confirm", page(admin, ""), new ConfirmView("force-release", "payments/invoice-42",
                99, null, List.of(), null, null, "", null, NOW));
        assertThat(gone).contains("does not hold").contains("Nobody waits");

        String expire = templates.render("confirm", page(admin, ""), new ConfirmView("expire-session", null, 0, null,
                null, ALICE, SessionIndex.of(Fixtures.cell()).get(ALICE).orElseThrow(), "", null, NOW));
        assertThat(expire).contains("name=\"session\" value=\"" + ALICE + "\"").contains("Confirm expiry")
                .contains("payments/invoice-42");
    }

    @Test
    void loginPage_hooks() {
        String html = templates.render("login", page(viewer, ""), new LoginView("/console/waits", "", null, true));
        assertThat(html).contains("name=\"actor\"").contains("name=\"token\" type=\"password\"")
                .contains("id=\"login\"").contains("name=\"next\" value=\"/console/waits\"");

        String off = templates.render("login", page(Viewer.anonymous(false), ""), new LoginView("/console", "", "off", false));
        assertThat(off).doesNotContain("id=\"login\"").contains("read-only");
    }

    @Test
    void sessionPage_showsAMultiLockRequestAsOne_withItsNamesAndWhatItStillWaitsFor() {
        io.warden.console.model.QueuedRequest heldPart = new io.warden.console.model.QueuedRequest(ALICE, "alice", "both",
                Mode.EXCLUSIVE, 40, 0, true, NOW, NOW);
        io.warden.console.model.QueuedRequest waitingPart = new io.warden.console.model.QueuedRequest(ALICE, "alice", "both",
                Mode.EXCLUSIVE, 40, 1, false, NOW, null);
        CellSnapshot cell = new CellSnapshot(NOW, 1, List.of(
                new LockState("m/a", List.of(heldPart)),
                new LockState("m/b", List.of(Fixtures.holder(BOB, "bob", Mode.EXCLUSIVE, 30, 0, 5), waitingPart))),
                List.of(Fixtures.session(ALICE, "alice"), Fixtures.session(BOB, "bob")));
        SessionIndex index = SessionIndex.of(cell);
        String html = templates.render("session_live", page(viewer, ALICE), new SessionView(ALICE,
                index.get(ALICE).orElseThrow(), AsOf.of(cell, NOW)));
        assertThat(html).contains("data-multi=\"m/a m/b\"").contains("multi-lock of 2")
                .contains("not granted: waits on m/b");
        assertThat(html).containsPattern("(?s)id=\"holds\".*<code class=\"mono\">both</code>");
    }

    @Test
    void sessionPage_ofAVanishedSession_saysSo() {
        String html = templates.render("session_live", page(viewer, "nope"), new SessionView("nope", null,
                AsOf.of(Fixtures.cell(), NOW)));
        assertThat(html).contains("is not in the cell: it expired, was closed, or never existed");
    }

    @Test
    void sessionsPage_showsTtlGatewayAndCounts() {
        var cell = Fixtures.cell();
        var index = SessionIndex.of(cell);
        String html = templates.render("sessions_live", page(viewer, ""), new SessionsView("", "", index.filter("", ""),
                7, 7, 200, List.of(), AsOf.of(cell, NOW)));
        assertThat(html).contains("tr data-session=\"" + ALICE + "\"").contains("12 s").contains("of 30 s")
                .contains("gone").contains("unknown");
    }

    @Test
    void suggestions_areOptions() {
        String html = templates.render("suggest", null, List.of("payments/invoice-42", HOSTILE));
        assertThat(html).contains("<option value=\"payments/invoice-42\"></option>").doesNotContain(HOSTILE);
    }

    @Test
    void everyLiveFragment_carriesItsAsOf() {
        var cell = Fixtures.cell();
        String html = templates.render("sessions_live", page(viewer, ""), new SessionsView("", "", List.of(), 0, 7, 200,
                List.of(), AsOf.of(cell, NOW)));
        assertThat(html).contains("class=\"asof\" data-age-ms=\"1000\"").contains("09:59:59 UTC").contains("revision");
        assertThat(html).contains("No sessions match.");
        // a QueuedRequest built by hand renders too (direct mode, no session)
        var direct = new QueuedRequest(null, "curator", null, Mode.EXCLUSIVE, 5, 0, true, NOW, null);
        var lock = new io.warden.console.model.LockState("jobs/x", List.of(direct));
        String lockHtml = templates.render("lock_live", page(admin, "jobs/x"),
                LockView.of("jobs/x", Optional.of(new io.warden.console.model.LockDetail(lock, 3, List.of())), NOW));
        assertThat(lockHtml).contains("direct (Curator)").contains("data-session=\"\" data-token=\"5\"");
    }

    @Test
    void cellDetails_areEscaped_onTheCellsOverviewAndNamespacePages() {
        var cells = Fixtures.twoCells(HOSTILE);
        var cell = Fixtures.cell();
        List<String> pages = new ArrayList<>();
        pages.add(templates.render("cells", page(admin, ""), new CellsView(cells, new AsOf(NOW, -1, NOW))));
        pages.add(templates.render("cells", page(viewer, ""), new CellsView(cells, new AsOf(NOW, -1, NOW))));
        pages.add(templates.render("overview", page(viewer, ""), new OverviewView(Overview.of(cell, NOW), null,
                Fixtures.health(), null, NOW, cells, null)));
        pages.add(templates.render("namespace", page(viewer, "pay"), new NamespaceView(
                LockListing.page(cell, "pay", "", "", 50, NOW), List.of(), CellsView.servingCell(cells, "pay"))));
        for (String html : pages) {
            assertThat(html).doesNotContain(HOSTILE).contains(ESCAPED);
        }
    }

    @Test
    void overview_saysWhenTheCellsCannotBeRead() {
        String html = templates.render("overview_live", page(viewer, ""), new OverviewView(Overview.of(Fixtures.cell(), NOW),
                null, Fixtures.health(), null, NOW, null, "no answer within 10 s"));
        assertThat(html).contains("id=\"cells-summary\"").contains("cannot read the cells: no answer within 10 s")
                .doesNotContain("cell-down");
    }

    @Test
    void cells_aDefaultCellThatDoesNotServe_isNamed_andItsRoutedNamespacesListed() {
        var cells = List.of(new io.warden.console.model.CellInfo("default", "zk1:2181", null, false,
                "not connected to ZooKeeper at zk1:2181", List.of("ops")));
        String overview = templates.render("overview_live", page(viewer, ""), new OverviewView(null, "x", null, "y", NOW,
                cells, null));
        assertThat(overview).contains("data-cell=\"default\"").contains("every namespace not routed to another cell");
        String page = templates.render("cells_live", page(admin, ""), new CellsView(cells, new AsOf(NOW, -1, NOW)));
        assertThat(page).contains("every namespace not routed elsewhere, and")
                .contains("href=\"/console/ns/ops\">ops</a>").contains("<span class=\"muted\">—</span>") // no chroot
                .contains("This gateway serves one cell");
    }
}
