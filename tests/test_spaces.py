from sweetrl_gym.spaces import Utterance


def test_contains_any_short_string():
    space = Utterance(max_chars=10)
    assert space.contains("héllo wörld"[:10])
    assert space.contains("")
    assert not space.contains("x" * 11)
    assert not space.contains(b"bytes")
    assert not space.contains(3)


def test_sample_is_seeded_and_contained():
    a, b = Utterance(50, seed=3), Utterance(50, seed=3)
    samples = [a.sample() for _ in range(5)]
    assert samples == [b.sample() for _ in range(5)]
    assert all(a.contains(s) for s in samples)


def test_equality_and_rejects_bad_size():
    assert Utterance(5) == Utterance(5) != Utterance(6)
    try:
        Utterance(0)
    except ValueError:
        pass
    else:
        raise AssertionError("max_chars=0 accepted")
