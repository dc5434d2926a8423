package io.warden.console.view;

/**
 * What the layout needs of every page.
 *
 * <p>Concurrency: an immutable value; safe to share between threads.
 *
 * @param title   the page's title (the layout adds " · Warden")
 * @param nav     which navigation entry is current: overview, sessions, waits, cells, audit, or empty
 * @param viewer  who looks
 * @param search  what the search box shows (the name or prefix this page is about), or empty
 * @param pollMs  how often live regions refresh
 * @param liveUrl the fragment URL of this page's live region, or null for a page that does not refresh
 * @param flash   a one-line message about an action just done, or null
 * @param banner  a failure to show at the top (gateway or ZooKeeper unreachable), or null
 * @param subject what the page is about (the namespace, lock name or session id), or empty; the page's heading even
 *                when its data could not be read
 */
public record Page(String title, String nav, Viewer viewer, String search, long pollMs, String liveUrl, String flash,
                   String banner, String subject) {
    public Page {
        search = search == null ? "" : search;
        nav = nav == null ? "" : nav;
        subject = subject == null ? "" : subject;
    }

    public Page withBanner(String failure) {
        return new Page(title, nav, viewer, search, pollMs, liveUrl, flash, failure, subject);
    }

    public Page withSubject(String about) {
        return new Page(title, nav, viewer, search, pollMs, liveUrl, flash, banner, about);
    }

    /** The polling trigger for htmx, e.g. {@code every 2000ms}. */
    public String trigger() {
        return "every " + pollMs + "ms";
    }
}
