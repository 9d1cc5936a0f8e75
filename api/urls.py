from django.urls import path

from api import views

app_name = "api"

urlpatterns = [
    path("whoami", views.WhoAmIView.as_view(), name="whoami"),
]
