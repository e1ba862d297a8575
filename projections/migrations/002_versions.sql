-- The version of each projection's live tables. A projection whose code
-- version is newer is rebuilt beside the live tables and swapped in.
CREATE TABLE projection_versions (
	name       text        PRIMARY KEY,
	version    integer     NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
