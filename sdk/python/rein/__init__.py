"""rein client for Python: ask rein before an agent acts, wait for people.

Standard library only. The usual entry point is the ``guard`` decorator::

    import rein

    @rein.guard(tool="payments.transfer")
    def transfer(to: str, amount: int) -> str:
        ...

    try:
        transfer(to="acct-7", amount=500)   # runs only if rein allows it
    except rein.Denied as e:
        print(e.decision, e.reason)

``AsyncClient`` offers the same calls for asyncio code::

    client = rein.AsyncClient()
    res = await client.check("get_weather", {"city": "Oslo"})

The client reads ``REIN_SERVER`` (default http://127.0.0.1:8750) and
``REIN_KEY`` from the environment unless given explicitly.
"""

from ._async import AsyncClient
from ._client import (
    Client,
    Denied,
    ReinError,
    Unanswered,
    default_client,
    guard,
)

__version__ = "0.1.0"

__all__ = ["AsyncClient", "Client", "Denied", "ReinError", "Unanswered", "default_client", "guard"]
