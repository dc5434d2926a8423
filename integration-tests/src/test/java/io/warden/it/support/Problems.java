package io.warden.it.support;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** What clients saw go wrong, each also on the {@link Timeline}. Concurrency: thread-safe. */
public final class Problems {
    private final Timeline timeline;
    private final List<String> list = Collections.synchronizedList(new ArrayList<>());

    public Problems(Timeline timeline) {
        this.timeline = timeline;
    }

    public void add(String problem) {
        list.add(problem);
        timeline.mark("PROBLEM " + problem);
    }

    /** Something worth knowing that is not a failure. */
    public void note(String note) {
        timeline.mark(note);
    }

    public List<String> list() {
        return List.copyOf(list);
    }
}
