"""A scheduler takes a bounded number of replicas: the dryrun refuses more, naming the limit."""

from __future__ import annotations

from typing import Any

import pytest

from torchx.schedulers import get_scheduler_factories
from torchx.schedulers.api import DescribeAppResponse, Scheduler
from torchx.specs import AppDef, AppDryRunInfo, CfgVal, Role, SpecsError


class Counting(Scheduler[list[int]]):
    """A scheduler whose request is built per replica, as the built-in ones build theirs."""

    max_replicas = 4

    def __init__(self) -> None:
        super().__init__("counting", "s")
        self.built = 0

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[list[int]]:
        request = [i for role in app.roles for i in range(role.num_replicas)]
        self.built += len(request)
        return AppDryRunInfo(request, repr)

    def schedule(self, dryrun_info: AppDryRunInfo[list[int]]) -> str:
        return "id"

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        return None

    def _cancel_existing(self, app_id: str) -> None:
        pass


def _app(*replicas: int) -> AppDef:
    roles = [
        Role(f"r{i}", image="/tmp", entrypoint="true", num_replicas=n)
        for i, n in enumerate(replicas)
    ]
    return AppDef("app", roles=roles)


def test_the_limit_itself_is_accepted() -> None:
    scheduler = Counting()
    assert scheduler.submit_dryrun(_app(4)).request == [0, 1, 2, 3]
    assert scheduler.submit_dryrun(_app(1, 3)).request == [0, 0, 1, 2]


def test_one_role_past_the_limit_is_refused_before_any_request_is_built() -> None:
    scheduler = Counting()
    with pytest.raises(SpecsError) as info:
        scheduler.submit_dryrun(_app(5))
    assert str(info.value) == (
        "role 'r0' num_replicas: got 5; the counting scheduler takes at most 4 replicas per "
        "app (its max_replicas); lower --num_replicas or split the app"
    )
    assert scheduler.built == 0


def test_roles_together_past_the_limit_are_refused() -> None:
    scheduler = Counting()
    with pytest.raises(SpecsError, match=r"num_replicas of all roles: got 6; .* at most 4"):
        scheduler.submit_dryrun(_app(2, 2, 2))
    with pytest.raises(SpecsError, match="num_replicas of all roles"):
        scheduler.submit(_app(3, 3))
    assert scheduler.built == 0


@pytest.mark.parametrize("name", sorted(get_scheduler_factories()))
def test_every_scheduler_has_a_limit_and_refuses_a_typo_at_once(name: str) -> None:
    scheduler: Any = get_scheduler_factories()[name]("s")
    limit = scheduler.max_replicas
    assert isinstance(limit, int) and 1 <= limit < 10**8
    with pytest.raises(
        SpecsError, match=f"got 100000000; the {name} scheduler takes at most {limit}"
    ):
        scheduler.submit_dryrun(_app(10**8), {})
