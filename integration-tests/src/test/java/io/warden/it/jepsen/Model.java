package io.warden.it.jepsen;

import java.util.List;

/**
 * A sequential specification for {@link Linearizability}: from a state, the states an operation with its recorded
 * outcome may lead to. None: the operation cannot happen there. More than one: the outcome does not fix the effect (an
 * operation whose answer never came may or may not have taken effect), and the checker follows every one.
 *
 * <p>States must be immutable values ({@code equals}/{@code hashCode}): the checker memoises on them.
 */
public interface Model<S> {
    S initial();

    List<S> step(S state, Op op);
}
