from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from twin.accounts import api as account_api
from twin.accounts import views as account_views
from twin.accounts.forms import LoginForm
from twin.common import views as common_views
from twin.fabrics import api as fabric_api
from twin.fabrics import views as fabric_views
from twin.journal import views as journal_views
from twin.runs import api as run_api
from twin.runs import views as run_views
from twin.simulations import api as simulation_api
from twin.simulations import views as simulation_views

api_patterns = [
    path("health/", common_views.health, name="api-health"),
    path("fabrics/", fabric_api.FabricListApi.as_view(), name="api-fabric-list"),
    path("fabrics/<id:pk>/", fabric_api.FabricDetailApi.as_view(), name="api-fabric-detail"),
    path("fabrics/<id:pk>/snapshots/", fabric_api.FabricSnapshotListApi.as_view(), name="api-fabric-snapshots"),
    path("snapshots/", fabric_api.SnapshotUploadApi.as_view(), name="api-snapshot-upload"),
    path("snapshots/<id:pk>/", fabric_api.SnapshotDetailApi.as_view(), name="api-snapshot-detail"),
    path("snapshots/<id:pk>/export/", fabric_api.SnapshotExportApi.as_view(), name="api-snapshot-export"),
    path("snapshots/<id:pk>/diff/<id:other>/", fabric_api.SnapshotDiffApi.as_view(), name="api-snapshot-diff"),
    path("snapshots/<id:pk>/layout/", fabric_api.SnapshotLayoutApi.as_view(), name="api-snapshot-layout"),
    path("snapshots/<id:pk>/search/", fabric_api.SnapshotSearchApi.as_view(), name="api-snapshot-search"),
    path("snapshots/<id:pk>/nodes/", fabric_api.SnapshotNodeApi.as_view(), name="api-snapshot-node"),
    path("snapshots/<id:pk>/path/", fabric_api.SnapshotPathApi.as_view(), name="api-snapshot-path"),
    path("runs/", run_api.RunListCreateApi.as_view(), name="api-run-list"),
    path("runs/<id:pk>/", run_api.RunDetailApi.as_view(), name="api-run-detail"),
    path("runs/<id:pk>/detail/", run_api.RunDetailDataApi.as_view(), name="api-run-detail-data"),
    path("runs/<id:pk>/cancel/", run_api.RunCancelApi.as_view(), name="api-run-cancel"),
    path("runs/<id:pk>/placement/", run_api.RunPlacementExportApi.as_view(), name="api-run-placement"),
    path("runs/<id:pk>/frames/", run_api.RunFrameApi.as_view(), name="api-run-frames"),
    path("traces/", simulation_api.TraceUploadApi.as_view(), name="api-trace-upload"),
    path("fabrics/<id:pk>/telemetry/", simulation_api.TelemetryApi.as_view(), name="api-fabric-telemetry"),
    path("preferences/<str:key>/", account_api.PreferenceApi.as_view(), name="api-preference"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Its set-up script is served as a file of its own, as the Content-Security-Policy requires.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

urlpatterns = [
    path("", fabric_views.fabric_list_page, name="fabric-list"),
    path("fabrics/", RedirectView.as_view(pattern_name="fabric-list"), name="fabric-list-alias"),  # where people type it
    path("fabrics/<id:fabric_id>/", fabric_views.fabric_page, name="fabric-detail"),
    path("fabrics/<id:fabric_id>/diff/", fabric_views.diff_page, name="fabric-diff"),
    path("fabrics/<id:fabric_id>/journal/", journal_views.journal_page, name="journal"),
    path("fabrics/<id:fabric_id>/journal/new/", journal_views.experiment_new_page, name="experiment-new"),
    path("fabrics/<id:fabric_id>/journal/calibrate/", journal_views.journal_calibrate, name="journal-calibrate"),
    path("fabrics/<id:fabric_id>/journal/<id:experiment_id>/", journal_views.experiment_page, name="experiment-detail"),
    path("fabrics/<id:fabric_id>/diagnosis/", simulation_views.diagnosis_page, name="diagnosis"),
    path("fabrics/<id:fabric_id>/telemetry/source/", simulation_views.telemetry_source_form, name="telemetry-source"),
    path("fabrics/<id:fabric_id>/telemetry/reading/", simulation_views.telemetry_reading_form, name="telemetry-reading"),
    path("upload/", fabric_views.upload_page, name="upload"),
    path("snapshots/<id:snapshot_id>/scale-up/", fabric_views.scale_up_correct, name="scale-up-correct"),
    path("runs/", run_views.run_list_page, name="run-list"),
    path("runs/<id:run_id>/", run_views.run_page, name="run-detail"),
    path("snapshots/<id:snapshot_id>/placement/", run_views.placement_start, name="placement-start"),
    path("snapshots/<id:snapshot_id>/failures/", run_views.failures_start, name="failures-start"),
    path("snapshots/<id:snapshot_id>/replay/", run_views.replay_start, name="replay-start"),
    path("snapshots/<id:snapshot_id>/whatif/", run_views.whatif_start, name="whatif-start"),
    path("runs/<id:run_id>/report/", simulation_views.whatif_report_page, name="whatif-report"),
    path("runs/<id:run_id>/report.<str:fmt>", simulation_views.whatif_report_download, name="whatif-report-download"),
    path("whatif/compare/", simulation_views.whatif_compare_page, name="whatif-compare"),
    path("users/", account_views.user_list, name="user-list"),
    path("users/<id:user_id>/", account_views.user_edit, name="user-edit"),
    path("login/", auth_views.LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("healthz", common_views.liveness, name="liveness"),
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
]

handler403 = "twin.common.views.permission_denied"
handler404 = "twin.common.views.page_not_found"
handler500 = "twin.common.views.server_error"
