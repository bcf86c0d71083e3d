"""End-to-end checks of the builtin components on a scheduler of your choice.

``IntegComponentTest().run_components(component_provider, image, scheduler, cfg)`` builds
the AppDef of every :class:`~.component_provider.ComponentProvider` in a module, submits
them all, waits, prints each app's logs and raises AssertionError unless every app
succeeded. Needs ``torchx-runner`` (installed with ``torchx``).
"""
