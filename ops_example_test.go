package ingest_test

import (
	"fmt"

	"github.com/ingestworks/ingest"
)

// Each upstream call asks for what the worker reads of its answer and no
// more: the fields= it sends is built from Keeps.
func ExampleFields() {
	for _, op := range []string{ingest.OpVideosList, ingest.OpSearchList, ingest.OpCategoriesList} {
		fmt.Printf("%s: %s\n", op, ingest.Fields(ingest.Keeps(op)))
	}
	fmt.Println("parts:", ingest.VideoParts())
	// Output:
	// videos.list: items(id,snippet(title,description,tags,channelId,channelTitle,categoryId,publishedAt,thumbnails/default/url,defaultAudioLanguage,defaultLanguage),contentDetails/duration,statistics(viewCount,likeCount,commentCount)),nextPageToken
	// search.list: items/id/videoId,nextPageToken
	// videoCategories.list: items(id,snippet/title)
	// parts: [snippet contentDetails statistics]
}
