import pytest

from recovery.scenarios import WarehouseBuilder, truncate_wms_tables


@pytest.fixture
def wms(transactional_db):
    """Empty WMS tables (Django's flush does not know the unmanaged tables) and a builder."""
    truncate_wms_tables()
    yield WarehouseBuilder()
    truncate_wms_tables()
