import flowcep


def test_version_is_exposed() -> None:
    assert flowcep.__version__ == "0.1.0"
