"""kubernetes: runs an app as a Volcano Job, or as batch/v1 Jobs behind a headless Service.

The manifests are plain dicts (what ``kubectl apply`` would read); dryrun prints them as
YAML and ``schedule`` submits them unchanged through the kubernetes Python client, which is
imported only when the API is called.

Where replicas find each other:

- Volcano (``-cfg api=volcano``, the default): one task per role; Volcano's ``svc`` plugin
  names pod ``k`` of task ``role`` ``<app_id>-<role>-<k>`` in the DNS subdomain ``<app_id>``,
  and its ``env`` plugin sets ``VC_TASK_INDEX`` (the replica id).
- batch (``-cfg api=batch``): one batch/v1 Job ``<app_id>-<role>-<k>`` per replica plus a
  headless Service ``<app_id>``; the pod of replica ``k`` has the hostname
  ``<app_id>-<role>-<k>`` and its replica id written into its command line. One Job per
  replica (rather than one Indexed Job per role) works on every Kubernetes release: Indexed
  Jobs need 1.21+, and older API servers silently drop ``completionMode``.

Either way replica 0 of the first role is ``<app_id>-<role0>-0.<app_id>``, exported as
``TORCHX_RANK0_HOST`` (and ``MASTER_ADDR``).

A sweep of single-replica trials on a 1.29+ server is ONE Indexed Job
(``kubernetes_indexed``); its trials' app ids ``NAMESPACE:JOB-INDEX`` are described by their
completion index here, and one of them cannot be cancelled alone.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    Stream,
)
from torchx.schedulers._container_rules import (
    check_image,
    to_dns_label,
)
from torchx.schedulers._errors import SchedulerError, check_params, require
from torchx.schedulers._kubernetes_client import (
    CONNECT_TIMEOUT_S,
    bounded_client,
    create_all,
    kubeconfig_problem,
    paged,
)
from torchx.schedulers._kubernetes_compat import (
    ANNOTATION_ISTIO_SIDECAR,
    JOB_STATE,
    LABEL_INSTANCE_TYPE,
    LABEL_KUBE_APP_NAME,
    LABEL_ORGANIZATION,
    LABEL_REPLICA_ID,
    LABEL_ROLE_INDEX,
    LABEL_ROLE_NAME,
    LABEL_UNIQUE_NAME,
    LABEL_VERSION,
    RESERVED_MEMMB,
    RESERVED_MILLICPU,
    RETRY_POLICIES,
    TASK_STATE,
    KubernetesJob,
    KubernetesOpts,
    app_to_resource,
    pod_labels,
    role_to_pod,
    sanitize_for_serialization,
)
from torchx.schedulers._kubernetes_logs import log_call_options, streamed_lines
from torchx.schedulers._kubernetes_manifests import (
    APIS,
    APP_NAME_CHARS,
    BACKEND,
    CANCELLED_ANNOTATION,
    DNS_LABEL_MAX,
    GPU_RESOURCE,
    LABEL_APP_ID,
    LABEL_APP_NAME,
    LABEL_MANAGED,
    LABEL_PREFIX,
    LABEL_REPLICA,
    LABEL_ROLE,
    MASTER_PORT,
    POD_GRACE_S,
    ROLE_NAME_CHARS,
    TOLERATION_EFFECTS,
    VOLCANO_GROUP,
    VOLCANO_PLURAL,
    VOLCANO_VERSION,
    KubernetesRequest,
    build_request,
    check_app,
    format_request,
    parse_toleration,
)
from torchx.schedulers._kubernetes_status import (
    describe_batch,
    describe_volcano,
    jobs_without_pods,
    not_started,
    role_of,
    stamped,
    untimestamp,
    why_no_pods,
    why_pending,
)
from torchx.schedulers._rfc3339 import parse_local
from torchx.schedulers.ids import make_unique
from torchx.schedulers.kubernetes_indexed import (
    COMPLETION_INDEX,
    LABEL_SWEEP,
    LABEL_SWEEP_INDEX,
    parse_trial,
    parse_version,
    trial_states,
)
from torchx.schedulers.sweep_names import sweep_trial
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    RoleStatus,
    SpecsError,
    runopts,
)
from torchx.workspace.docker_workspace import DockerWorkspaceMixin

EXTRA = "kubernetes"
# How often a followed log checks whether its pod has started.
LOG_START_POLL_S = 1.0


class KubernetesApiError(SchedulerError):
    """The API server refused a request; one line with the server's reason and what to do.

    ``status`` is the HTTP status of the refusal (None when no server was reached); ``sent``
    is True for a request that was sent and got no answer, so may have taken effect.
    """

    def __init__(
        self, message: str, fix: str = "", status: int | None = None, *, sent: bool = False
    ) -> None:
        super().__init__(BACKEND, message, fix)
        self.status = status
        self.sent = sent

    @classmethod
    def from_api(cls, e: Any, action: str, namespace: str | None) -> KubernetesApiError:
        """From a client ``ApiException``: what was attempted, where, and the server's words."""

        try:
            reason = str(json.loads(e.body or "{}").get("message") or "")
        except (ValueError, AttributeError):
            reason = ""  # not a Status object: fall back to the HTTP reason
        reason = " ".join((reason or str(e.reason or "") or f"HTTP {e.status}").split())
        where = f" in namespace {namespace!r}" if namespace else ""
        fix = ""
        if e.status == 401:
            fix = "check the credentials in your kubeconfig"
        elif e.status == 403 and "cannot" in reason:  # RBAC, not an admission plugin
            fix = "ask a cluster admin for this permission (a Role bound to your account)"
        elif e.status == 404 and namespace and "namespaces" in reason and namespace in reason:
            fix = "create the namespace or pick another with -cfg namespace=NAME"
        return cls(f"could not {action}{where}: {reason}", fix, e.status)


class KubernetesScheduler(DockerWorkspaceMixin, Scheduler[KubernetesRequest]):
    """Submits apps to a Kubernetes cluster; see the module docstring for the layout.

    Workspaces are built into images on the local Docker engine and pushed to
    ``image_repo`` at submit (:class:`~torchx.workspace.docker_workspace.DockerWorkspaceMixin`).
    """

    def __init__(
        self, session_name: str = "torchx", client: Any = None, docker_client: Any = None
    ) -> None:
        """``client``: a ``kubernetes.client.ApiClient`` (found from the kubeconfig when
        None); ``docker_client``: the ``docker.DockerClient`` that builds and pushes
        workspace images (found as the docker CLI finds its engine when None)."""
        super().__init__(BACKEND, session_name, docker_client=docker_client)
        self._api_client = client

    # -- API access -------------------------------------------------------------------

    def _client(self) -> Any:
        if self._api_client is None:
            k8s: Any = require("kubernetes", scheduler=BACKEND, extra=EXTRA)
            config = k8s.config
            conf = k8s.client.Configuration()
            # In a pod: its service account. Elsewhere: KUBECONFIG or ~/.kube/config. The
            # client library's process-wide default configuration is left alone.
            try:
                config.load_incluster_config(client_configuration=conf)
                source = "the pod's service account"
            except config.ConfigException:
                # Read KUBECONFIG now: the library's default is the one at its import.
                source = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
                try:
                    config.load_kube_config(config_file=source, client_configuration=conf)
                except (config.ConfigException, OSError) as e:
                    what, fix = kubeconfig_problem(e, os.environ.get("KUBECONFIG"))
                    raise KubernetesApiError(what, fix) from None

            def unreachable(server: str, why: str) -> KubernetesApiError:
                return KubernetesApiError(
                    f"cannot reach the API server {server} ({why})",
                    f"check that the cluster is up and that the server address in {source} "
                    "is reachable from here",
                )

            def unanswered(server: str, method: str, why: str) -> KubernetesApiError:
                return KubernetesApiError(
                    f"sent a {method} request to the API server {server}; {why}; "
                    "it may have taken effect",
                    "check with kubectl or torchx list before submitting again",
                    sent=True,
                )

            self._api_client = bounded_client(k8s, conf, unreachable, unanswered)
        return self._api_client

    def _apis(self) -> Any:
        return require("kubernetes.client", scheduler=BACKEND, extra=EXTRA)

    def close(self) -> None:
        self._close_docker_client()

    # -- submission -------------------------------------------------------------------

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("namespace", str, "Kubernetes namespace to create the app in", default="default")
        opts.add(
            "api",
            str,
            "volcano (a Volcano Job, gang scheduled) or batch (one batch/v1 "
            "Job per replica and a headless Service, when Volcano is absent)",
            default="volcano",
        )
        opts.add("queue", str, "Volcano queue (api=volcano only)", default="default")
        opts.add("service_account", str, "service account the pods run as")
        opts.add("priority_class", str, "priority class name of the pods")
        opts.add("image_pull_secrets", list, "names of secrets used to pull the images")
        opts.add("node_selector", dict, "node labels the pods must run on (k1:v1;k2:v2)")
        opts.add(
            "tolerations",
            list,
            "taints the pods tolerate, each KEY[=VALUE][:EFFECT] (e.g. "
            "nvidia.com/gpu:NoSchedule;dedicated=ml:NoExecute)",
        )
        opts.add("labels", dict, "extra labels put on every object and pod")
        opts.add("shm_size", str, "size limit of /dev/shm (an in-memory emptyDir), e.g. 8Gi")
        opts.add(
            "termination_grace_seconds",
            int,
            "seconds an evicted or deleted pod has, after SIGTERM, to checkpoint and exit "
            "(terminationGracePeriodSeconds)",
            default=POD_GRACE_S,
        )
        return opts

    def _submit_dryrun(
        self, app: AppDef, cfg: dict[str, CfgVal]
    ) -> AppDryRunInfo[KubernetesRequest]:
        check_app(app, cfg)
        app_id = make_unique(to_dns_label(app.name, APP_NAME_CHARS))
        return AppDryRunInfo(build_request(app, app_id, cfg), format_request)

    def with_workspace(
        self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: str
    ) -> tuple[AppDef, dict[str, CfgVal]]:
        """Build each role image + ``workspace`` with the local Docker engine (pushed at
        submit to ``image_repo``, where the cluster pulls it)."""
        if not cfg.get("image_repo"):
            raise SpecsError(
                "run option 'image_repo'",
                cfg.get("image_repo"),
                "a cluster pulls the workspace image from a repository; name one to push it "
                '(-cfg image_repo=REGISTRY/REPO), or run without a workspace (--workspace "")',
            )
        for role in app.roles:
            check_image(f"role {role.name!r} image", role.image)
        return super().with_workspace(app, cfg, workspace)

    def schedule(self, dryrun_info: AppDryRunInfo[KubernetesRequest]) -> str:
        req = dryrun_info.request
        # Before any object exists: a failed push leaves nothing in the cluster.
        # Each target is REPO:TAG as the dryrun made it (image_repo carries no tag).
        self.push_images({src: _repo_and_tag(dst) for src, dst in req.push.items()})
        create_all(
            req.manifests,
            lambda m: self._create(req.namespace, m),
            lambda m, read_s: self._delete(req.namespace, m, read_s),
            lambda e: getattr(e, "sent", False) or not isinstance(e, Exception),
            req.namespace,
        )
        return f"{req.namespace}:{req.app_id}"

    def _create(self, namespace: str, manifest: dict[str, Any], dry_run: bool = False) -> Any:
        """Create one manifest; ``dry_run`` has the server validate and admit it, not store it.

        Returns the object as the server would store it.
        """
        apis = self._apis()
        client = self._client()
        kind = manifest["kind"]
        extra = {"dry_run": "All"} if dry_run else {}
        try:
            if kind == "Job" and manifest["apiVersion"].startswith(VOLCANO_GROUP):
                return apis.CustomObjectsApi(client).create_namespaced_custom_object(
                    VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, manifest, **extra
                )
            if kind == "Job":
                made = apis.BatchV1Api(client).create_namespaced_job(namespace, manifest, **extra)
            elif kind == "Service":
                made = apis.CoreV1Api(client).create_namespaced_service(
                    namespace, manifest, **extra
                )
            else:
                raise TypeError(f"cannot create a {kind}")
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"create {kind} {manifest['metadata']['name']!r}", namespace
            ) from None
        return client.sanitize_for_serialization(made)

    def _delete(self, namespace: str, manifest: dict[str, Any], read_s: float = 0) -> None:
        apis = self._apis()
        client = self._client()
        name = manifest["metadata"]["name"]
        kw = {"_request_timeout": (CONNECT_TIMEOUT_S, read_s)} if read_s else {}
        try:
            if manifest["kind"] == "Job" and manifest["apiVersion"].startswith(VOLCANO_GROUP):
                apis.CustomObjectsApi(client).delete_namespaced_custom_object(
                    VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, name, **kw
                )
            elif manifest["kind"] == "Job":
                apis.BatchV1Api(client).delete_namespaced_job(
                    name, namespace, propagation_policy="Background", **kw
                )
            else:
                apis.CoreV1Api(client).delete_namespaced_service(name, namespace, **kw)
        except apis.ApiException as e:
            if e.status != 404:
                raise KubernetesApiError.from_api(
                    e, f"delete {manifest['kind']} {name!r}", namespace
                ) from None

    # -- inspection -------------------------------------------------------------------

    @staticmethod
    def _split(app_id: str) -> tuple[str, str]:
        namespace, sep, name = app_id.partition(":")
        if not sep or not namespace or not name:
            raise SpecsError("app id", app_id, "expected NAMESPACE:NAME as printed by run")
        return namespace, name

    def server_version(self) -> tuple[int, int] | None:
        """The API server's ``(major, minor)`` from ``/version``; None if it cannot say."""
        apis = self._apis()
        try:
            info = apis.VersionApi(self._client()).get_code()
        except apis.ApiException:
            return None
        return parse_version(str(info.major), str(info.minor))

    def sweep_trial_states(
        self, namespace: str, sweep_id: str
    ) -> dict[str, tuple[AppState, int | None, str, int]]:
        """Every trial of a sweep that has a pod, from its Indexed Jobs or one Job per
        trial: ``(state, exit code, message, runs started)`` by trial app id
        (``trial_states``), from ONE pod list call."""
        apis = self._apis()
        try:
            items = (
                apis.CoreV1Api(self._client())
                .list_namespaced_pod(namespace, label_selector=f"{LABEL_SWEEP}={sweep_id}")
                .items
            )
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"list the pods of sweep {sweep_id!r}", namespace
            ) from None
        client = self._client()
        pods = [client.sanitize_for_serialization(p) for p in items]
        return trial_states(namespace, pods)

    def _sweep_job(self, namespace: str, job: str) -> Any | None:
        """The sweep's Indexed Job ``job``, or None when no Job of a sweep has that name."""
        apis = self._apis()
        try:
            found = apis.BatchV1Api(self._client()).read_namespaced_job(job, namespace)
        except apis.ApiException as e:
            if e.status == 404:
                return None
            raise KubernetesApiError.from_api(e, f"read Job {job!r}", namespace) from None
        return found if LABEL_SWEEP in (found.metadata.labels or {}) else None

    def _trial(
        self, namespace: str, job: str, index: int
    ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The pod template of a sweep's Indexed Job and the pods of its trial ``index``, or
        None when no such Job exists."""
        found = self._sweep_job(namespace, job)
        if found is None:
            return None
        apis = self._apis()
        client = self._client()
        try:
            items = (
                apis.CoreV1Api(client)
                .list_namespaced_pod(
                    namespace, label_selector=f"{LABEL_APP_ID}={job},{COMPLETION_INDEX}={index}"
                )
                .items
            )
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"list the pods of Job {job!r} index {index}", namespace
            ) from None
        template = client.sanitize_for_serialization(found.spec.template)
        return template, [client.sanitize_for_serialization(p) for p in items]

    def _describe_trial(self, app_id: str) -> DescribeAppResponse | None:
        namespace, name = self._split(app_id)
        parsed = parse_trial(name)
        if parsed is None:
            return None
        found = self._trial(namespace, *parsed)
        if found is None:
            return None
        template, pods = found
        state, code, msg, _ = trial_states(namespace, pods).get(
            app_id, (AppState.PENDING, None, "", 0)
        )
        role = str(((template.get("metadata") or {}).get("labels") or {}).get(LABEL_ROLE, ""))
        replica = ReplicaStatus(id=0, state=state, role=role, hostname="")
        replica.exit_code = code
        replica.structured_error_msg = msg
        desc = DescribeAppResponse(
            app_id=app_id,
            state=state,
            msg=msg,
            roles_statuses=[RoleStatus(role, [replica])],
            # the role as the Job's pods run it: one replica, the script of every trial
            roles=[role_of(role, template, 1)],
        )
        return why_pending(desc, pods)

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        namespace, name = self._split(app_id)
        trial = self._describe_trial(app_id)
        if trial is not None:
            return trial
        apis = self._apis()
        client = self._client()
        try:
            vjob = apis.CustomObjectsApi(client).get_namespaced_custom_object(
                VOLCANO_GROUP, VOLCANO_VERSION, namespace, VOLCANO_PLURAL, name
            )
        except apis.ApiException as e:
            # 404: no such Volcano Job, or no Volcano installed (then it is a batch app).
            if e.status != 404:
                raise KubernetesApiError.from_api(e, f"read app {name!r}", namespace) from None
            vjob = None
        if vjob is not None:
            pods = self._pods(namespace, name)
            return why_pending(describe_volcano(app_id, vjob, pods), pods)
        jobs = self._app_objects(
            "Jobs", apis.BatchV1Api(client).list_namespaced_job, namespace, name
        )
        if not jobs:
            return None
        pods = self._pods(namespace, name)
        desc = why_pending(describe_batch(app_id, jobs, pods, session=self.session_name), pods)
        bare = jobs_without_pods(jobs, pods)
        if desc.state != AppState.PENDING or not bare:
            return desc
        try:
            events = (
                apis.CoreV1Api(client)
                .list_namespaced_event(
                    namespace, field_selector="involvedObject.kind=Job,reason=FailedCreate"
                )
                .items
            )
        except apis.ApiException:
            return desc  # not every account may read events; the state stands without why
        return why_no_pods(desc, bare, events)

    def _pods(self, namespace: str, name: str) -> list[dict[str, Any]]:
        apis = self._apis()
        return self._app_objects(
            "pods", apis.CoreV1Api(self._client()).list_namespaced_pod, namespace, name
        )

    def _app_objects(
        self, kind: str, list_call: Callable[..., Any], namespace: str, name: str
    ) -> list[dict[str, Any]]:
        """The objects of one kind labelled as app ``name``, as plain dicts."""
        apis = self._apis()
        try:
            items = list_call(namespace, label_selector=f"{LABEL_APP_ID}={name}").items
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"list the {kind} of app {name!r}", namespace
            ) from None
        client = self._client()
        return [client.sanitize_for_serialization(item) for item in items]

    def _managed_pods(self, apps: set[str]) -> dict[str, list[dict[str, Any]]]:
        """The pods of the batch apps ``NAMESPACE:APP_ID`` in ``apps``, from one paged list;
        none where pods may not be listed (the Jobs' own state then stands)."""
        apis = self._apis()
        client = self._client()
        listing = apis.CoreV1Api(client).list_pod_for_all_namespaces
        try:
            items = list(paged(listing, label_selector=f"{LABEL_MANAGED}=torchx"))
        except apis.ApiException as e:
            if e.status == 403:
                return {}
            raise KubernetesApiError.from_api(e, "list pods", None) from None
        out: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            meta = item.metadata
            key = f"{meta.namespace}:{(meta.labels or {}).get(LABEL_APP_ID, '')}"
            if key in apps:
                out.setdefault(key, []).append(client.sanitize_for_serialization(item))
        return out

    def list(self) -> list[ListAppResponse]:
        apis = self._apis()
        client = self._client()
        selector = f"{LABEL_MANAGED}=torchx"
        out: list[ListAppResponse] = []
        custom = apis.CustomObjectsApi(client)
        try:
            vjobs = list(
                paged(
                    lambda **kw: custom.list_cluster_custom_object(
                        VOLCANO_GROUP, VOLCANO_VERSION, VOLCANO_PLURAL, **kw
                    ),
                    label_selector=selector,
                )
            )
        except apis.ApiException as e:
            if e.status != 404:  # 404: no Volcano CRD installed
                raise KubernetesApiError.from_api(e, "list Volcano Jobs", None) from None
            vjobs = []
        for v in vjobs:
            meta = v["metadata"]
            desc = describe_volcano(f"{meta['namespace']}:{meta['name']}", v)
            out.append(
                ListAppResponse(
                    desc.app_id,
                    desc.state,
                    name=meta.get("labels", {}).get(LABEL_APP_NAME, ""),
                    submitted_at=parse_local(meta.get("creationTimestamp")),
                    sweep=_sweep_of(meta.get("labels") or {}),
                )
            )
        try:
            jobs = list(
                paged(apis.BatchV1Api(client).list_job_for_all_namespaces, label_selector=selector)
            )
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(e, "list Jobs", None) from None
        by_app: dict[str, list[dict[str, Any]]] = {}
        for j in jobs:
            d = client.sanitize_for_serialization(j)
            key = f"{d['metadata']['namespace']}:{d['metadata']['labels'][LABEL_APP_ID]}"
            by_app.setdefault(key, []).append(d)
        pods_of = self._managed_pods(set(by_app)) if by_app else {}
        for key, group in sorted(by_app.items()):
            # With its pods, as describe sees it: a Job whose pod waits is "active" too.
            desc = describe_batch(key, group, pods_of.get(key, ()), session=self.session_name)
            meta = group[0]["metadata"]
            out.append(
                ListAppResponse(
                    key,
                    desc.state,
                    name=meta["labels"].get(LABEL_APP_NAME, ""),
                    submitted_at=parse_local(meta.get("creationTimestamp")),
                    sweep=_sweep_of(meta["labels"]),
                )
            )
        return out

    # Kubernetes keeps one log per pod, both streams together.
    log_streams = (Stream.COMBINED,)

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        return untimestamp(self._stamped_log(request), request.until)

    def _replica_log_timed(self, request: LogRequest) -> Iterable[tuple[datetime | None, str]]:
        return stamped(self._stamped_log(request), request.until)

    def _stamped_log(self, request: LogRequest) -> Iterable[str]:
        """The pod's log lines, each starting with its time (``timestamps=True``)."""
        namespace, name = self._split(request.app_id)
        k = request.k
        wanted = f"{name}-{to_dns_label(request.role_name, ROLE_NAME_CHARS)}-{k}"
        parsed = parse_trial(name)
        trial = self._trial(namespace, *parsed) if parsed is not None else None
        if trial is not None:
            # a sweep trial: the pods of its completion index
            pods = trial[1] if k == 0 else []
            wanted = f"{parsed[0]} index {parsed[1]}" if parsed else wanted
        else:
            pods = [
                p
                for p in self._pods(namespace, name)
                if p["metadata"]["labels"].get(LABEL_ROLE) == to_dns_label(request.role_name, 63)
                and wanted in (p["spec"].get("hostname"), p["metadata"]["name"])
            ]
        if not pods:
            raise SpecsError("replica", k, f"no pod {wanted} in {namespace}; is the app running?")
        # A retried replica leaves its earlier pods behind: read the newest one.
        pod = max(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))
        pod_name = pod["metadata"]["name"]
        apis = self._apis()
        core = apis.CoreV1Api(self._client())
        # A pod not started yet has written nothing (and its node would refuse to say so):
        # without follow its log is empty; with follow, wait for its containers to start.
        if not_started(pod) and (not request.follow or not self._wait_started(core, pod)):
            return ()
        try:
            resp = core.read_namespaced_pod_log(
                pod_name, namespace, **log_call_options(request.follow, request.since)
            )
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(
                e, f"read the log of pod {pod_name!r}", namespace
            ) from None

        def broken(why: str) -> KubernetesApiError:
            return KubernetesApiError(
                f"the log of pod {pod_name!r} in namespace {namespace!r} broke off: {why}",
                "check that the API server is up, then read the log again",
            )

        return streamed_lines(resp, request.follow, broken)

    def _wait_started(self, core: Any, pod: Mapping[str, Any]) -> bool:
        """Wait (until Ctrl-C) for ``pod`` to start; False if it is deleted first."""
        apis = self._apis()
        name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
        while not_started(pod):
            time.sleep(LOG_START_POLL_S)
            try:
                found = core.read_namespaced_pod(name, namespace)
            except apis.ApiException as e:
                if e.status == 404:
                    return False
                raise KubernetesApiError.from_api(e, f"read pod {name!r}", namespace) from None
            pod = self._client().sanitize_for_serialization(found)
        return True

    def ended_app_holds_objects(self, app_id: str) -> bool:
        """True (its Jobs, Service and pods stay in the namespace), but for a trial of a
        sweep's Indexed Job: its pods are the Job's, deleted with the whole sweep."""
        return self._indexed_trial(app_id) is None

    def _indexed_trial(self, app_id: str) -> tuple[str, int] | None:
        """``(job, completion index)`` when ``app_id`` is a trial of an Indexed Job that
        exists, else None (an app of its own, whatever its name)."""
        namespace, name = self._split(app_id)
        parsed = parse_trial(name)
        if parsed is None or self._sweep_job(namespace, parsed[0]) is None:
            return None
        return parsed

    def _cancel_existing(self, app_id: str) -> None:
        """Delete the app's Volcano Job, or its Jobs, Service and pods."""
        trial = self._indexed_trial(app_id)
        if trial is not None:  # one that has not ended (``ended_app_holds_objects``)
            raise SchedulerError(
                BACKEND,
                f"cannot cancel {app_id} alone: it is completion index {trial[1]} of the "
                f"Indexed Job {trial[0]!r}, and Kubernetes replaces a deleted index's pod",
                "cancel the whole sweep (torchx cancel SWEEP_HANDLE)",
            )
        namespace, name = self._split(app_id)
        self._delete_labelled(namespace, f"{LABEL_APP_ID}={name}", f"app {name!r}")

    def delete_sweep(self, namespace: str, sweep_id: str) -> None:
        """Delete every object of every trial of a sweep (those labelled with its id)."""
        self._delete_labelled(namespace, f"{LABEL_SWEEP}={sweep_id}", f"sweep {sweep_id!r}")

    def _delete_labelled(self, namespace: str, selector: str, what: str) -> None:
        """Delete the Volcano Jobs, Jobs, Services and pods that ``selector`` matches."""
        apis = self._apis()
        client = self._client()
        try:
            apis.CustomObjectsApi(client).delete_collection_namespaced_custom_object(
                VOLCANO_GROUP,
                VOLCANO_VERSION,
                namespace,
                VOLCANO_PLURAL,
                label_selector=selector,
                propagation_policy="Background",
            )
        except apis.ApiException as e:
            if e.status != 404:  # 404: no Volcano installed
                raise KubernetesApiError.from_api(e, f"delete {what}", namespace) from None
        batch = apis.BatchV1Api(client)
        core = apis.CoreV1Api(client)
        try:
            # Background propagation lets the garbage collector remove the pods too; they are
            # also deleted here so that nothing depends on how soon it gets to them.
            batch.delete_collection_namespaced_job(
                namespace, label_selector=selector, propagation_policy="Background"
            )
            for svc in core.list_namespaced_service(namespace, label_selector=selector).items:
                try:
                    core.delete_namespaced_service(svc.metadata.name, namespace)
                except apis.ApiException as e:
                    if e.status != 404:
                        raise
            core.delete_collection_namespaced_pod(namespace, label_selector=selector)
        except apis.ApiException as e:
            raise KubernetesApiError.from_api(e, f"delete {what}", namespace) from None


def create_scheduler(
    session_name: str, client: Any = None, docker_client: Any = None, **params: Any
) -> KubernetesScheduler:
    """The kubernetes factory; its parameters are ``client`` (a
    ``kubernetes.client.ApiClient``) and ``docker_client`` (for workspace images)."""
    check_params(BACKEND, params, ("client", "docker_client"))
    return KubernetesScheduler(session_name, client=client, docker_client=docker_client)


def _sweep_of(labels: dict[str, str]) -> str:
    """The sweep a Job is of, from its labels: a trial's (``sweep-ID/INDEX``) or an
    Indexed Job's, which runs every trial it was given (``sweep-ID``)."""
    return sweep_trial(labels.get(LABEL_SWEEP), labels.get(LABEL_SWEEP_INDEX))


def _repo_and_tag(pushed: str) -> tuple[str, str]:
    repo, _, tag = pushed.rpartition(":")
    return repo, tag


__all__ = [
    "ANNOTATION_ISTIO_SIDECAR",
    "APIS",
    "APP_NAME_CHARS",
    "BACKEND",
    "CANCELLED_ANNOTATION",
    "DNS_LABEL_MAX",
    "EXTRA",
    "GPU_RESOURCE",
    "JOB_STATE",
    "LABEL_APP_ID",
    "LABEL_APP_NAME",
    "LABEL_INSTANCE_TYPE",
    "LABEL_KUBE_APP_NAME",
    "LABEL_MANAGED",
    "LABEL_ORGANIZATION",
    "LABEL_PREFIX",
    "LABEL_REPLICA",
    "LABEL_REPLICA_ID",
    "LABEL_ROLE",
    "LABEL_ROLE_INDEX",
    "LABEL_ROLE_NAME",
    "LABEL_UNIQUE_NAME",
    "LABEL_VERSION",
    "MASTER_PORT",
    "RESERVED_MEMMB",
    "RESERVED_MILLICPU",
    "RETRY_POLICIES",
    "ROLE_NAME_CHARS",
    "TASK_STATE",
    "TOLERATION_EFFECTS",
    "VOLCANO_GROUP",
    "VOLCANO_PLURAL",
    "VOLCANO_VERSION",
    "KubernetesApiError",
    "KubernetesJob",
    "KubernetesOpts",
    "KubernetesRequest",
    "KubernetesScheduler",
    "app_to_resource",
    "build_request",
    "create_scheduler",
    "parse_toleration",
    "pod_labels",
    "role_to_pod",
    "sanitize_for_serialization",
]
