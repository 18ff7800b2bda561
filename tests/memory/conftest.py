import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "memory.db")
